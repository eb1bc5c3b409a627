"""Turn the pytest results of the task's checks into Harbor reward files.

Checks named ``test_initial_*`` guard the environment (input files present and unchanged): if any
fails, the reward is 0 whatever else passed, because the result cannot be trusted. The other checks
measure the agent's work. Mode "fraction" rewards the fraction of them that passed (partial credit);
mode "binary" rewards 1 only when all passed.

Checks named ``test_shape_*`` judge only the form of an answer (valid JSON, a CSV header, the
executable bit, commands copied from the instruction): a made-up answer in the right format passes
them. They count only next to a passed content check, so form without content scores 0.

Writes /logs/verifier/reward.json as {"reward": r} (one key: trial runners average every key) and
/logs/verifier/tests.json with one 0/1 entry per check. Results come from the CTRF report (uvx +
pytest-json-ctrf) or, failing that, the JUnit XML report (plain pytest). The reading and scoring are
the verifier library's (tests/aes_verifier.py).
"""

import argparse
import os
import sys

# The verifier library beside this file (-I leaves this folder off sys.path; first, so nothing else stands in)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aes_verifier  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["fraction", "binary"], default="fraction")
    args = parser.parse_args()
    results, source = aes_verifier.read_results()
    reward, reason = aes_verifier.score(results, args.mode)
    aes_verifier.clear(names=("reward.json", "reward.txt", "tests.json"))
    aes_verifier.write_json("tests.json", {name: int(ok) for name, ok in sorted(results.items())})
    aes_verifier.write_reward(round(reward, 6), as_json=True)
    print(f"reward {reward:.4f}: {reason} (from {source})")


if __name__ == "__main__":
    main()

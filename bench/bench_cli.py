"""CLI start-up: median wall time of ``autoenvscaling --help`` next to ``python -c pass``.

The help screen loads every installed plugin (entry points) to list their commands, so this is the
price every command pays before doing anything. Target: under 0.3 s with all first-party plugins
installed. Run it with the project's environment:

    .venv/bin/python bench/bench_cli.py [--runs 15]

If it is over target, ``python -X importtime -c "from autoenvscaling.cli.main import main; main(['--help'])"``
shows which import costs what.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

TARGET_SECONDS = 0.3
ROOT = Path(__file__).resolve().parents[1]


def median_seconds(command: list[str], runs: int) -> float:
    """Median wall time of ``command`` over ``runs`` runs, after one warm-up run (page cache, .pyc)."""
    env = {**os.environ, "AUTOENVSCALING_STRICT_PLUGINS": "0"}
    subprocess.run(command, capture_output=True, env=env, check=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    script = Path(sys.executable).with_name("autoenvscaling")
    cli = [str(script)] if script.exists() else [shutil.which("autoenvscaling") or "autoenvscaling"]
    installed = sorted(f"{ep.name} ({ep.dist.name if ep.dist else '?'})"
                       for ep in metadata.entry_points(group="autoenvscaling"))
    first_party = sorted(p.parent.name for p in (ROOT / "plugins").glob("*/pyproject.toml"))
    installed_names = {ep.dist.name for ep in metadata.entry_points(group="autoenvscaling") if ep.dist}
    missing = [name for name in first_party if f"autoenvscaling-{name}" not in installed_names]

    baseline = median_seconds([sys.executable, "-c", "pass"], args.runs)
    help_time = median_seconds([*cli, "--help"], args.runs)
    print(f"plugins installed: {', '.join(installed) or 'none'}")
    if missing:
        print(f"first-party plugins NOT installed (the figure below excludes them): {', '.join(missing)}")
    print(f"python -c pass          median {baseline * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"autoenvscaling --help   median {help_time * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"ratio {help_time / baseline:.1f}x; target < {TARGET_SECONDS * 1000:.0f} ms: "
          f"{'met' if help_time < TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()

"""Harbor as a client of what we generate, and the same trials on our own runtime side by side.

1. Generate ``--lint-tasks`` tasks per domain (procedural, over the families and levels) and run
   ``harbor lint`` (Harbor 0.26, its default rules) over them: findings per domain, by rule.
2. Run Harbor's oracle and nop agents on podman over ``--trial-tasks`` of them per domain (and over
   ``--corpus`` task folders), gpu_kernels with ``--override-gpus 0`` where no GPU is present, and
   the same two agents on our runtime (``--backend``, bwrap by default); print both rewards and
   seconds, and the ratio of the medians (oracle trial, and an admission's oracle + nop).

    .venv/bin/python bench/bench_harbor.py --install              # Harbor into <cache>/harbor-venv first
    .venv/bin/python bench/bench_harbor.py [--domains terminal,swe] [--lint-tasks 10] [--trial-tasks 1]
    .venv/bin/python bench/bench_harbor.py --domains none --corpus ../shared/corpora/harbor-cookbook --no-lint

Needs podman serving the Docker API (DOCKER_HOST, as .ci/podman.sh sets it) for the stand-in base
images Harbor's builds start from (see autoenvscaling/testing/harbor_client.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
DOMAINS = "terminal,swe,professional,computer_use,gpu_kernels"


def generate(host: Any, domain: str, n: int, out: Path) -> list[Path]:
    from autoenvscaling.tasks import short_name, write_task

    dom = host.domains.get(domain)()
    families = [f.name for f in dom.families()]
    levels = ("easy", "medium", "hard")
    paths = []
    for i in range(n):
        task = dom.generate(families[i % len(families)], seed=2000 + i, difficulty=levels[(i // len(families)) % 3])
        paths.append(write_task(task, out / domain / short_name(task.name)))
    return paths


async def ours(runner: Any, host: Any, task_dir: Path) -> dict[str, tuple[float | None, float]]:
    from autoenvscaling.tasks import read_task

    task = read_task(task_dir)
    found = {}
    for agent in ("oracle", "nop"):
        start = time.monotonic()
        result = await runner.run(task, host.agents.get(agent)())
        found[agent] = (result.reward if result.status == "ok" else None, time.monotonic() - start)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", default=DOMAINS, help="comma-separated, or 'none'")
    parser.add_argument("--lint-tasks", type=int, default=10)
    parser.add_argument("--trial-tasks", type=int, default=1)
    parser.add_argument("--corpus", default=None, help="a folder of task directories to run as well")
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--no-lint", action="store_true")
    parser.add_argument("--no-trials", action="store_true")
    parser.add_argument("--install", action="store_true", help="install Harbor into its venv when missing")
    args = parser.parse_args()

    from autoenvscaling.gates.validate import discover_tasks
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.gpu import host_gpus
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling.testing import harbor_client as hc

    harbor = hc.harbor_bin(install=args.install)
    host = create_host()
    domains = [] if args.domains == "none" else args.domains.split(",")
    work = Path(tempfile.mkdtemp(prefix="bench-harbor-"))
    trial_dirs: list[tuple[str, Path]] = []
    for domain in domains:
        n = max(args.trial_tasks, 0 if args.no_lint else args.lint_tasks)
        paths = generate(host, domain, n, work)
        if not args.no_lint:
            findings = hc.lint(harbor, paths[: args.lint_tasks])
            rules = Counter(f["rule"] for f in findings)
            print(f"{domain}: harbor lint on {args.lint_tasks} tasks: {len(findings)} findings"
                  + (f" ({', '.join(f'{r} x{n}' for r, n in sorted(rules.items()))})" if rules else "")
                  + f", {len(hc.unexplained(findings))} not a declared shared verifier", flush=True)
        trial_dirs += [(domain, p) for p in paths[: args.trial_tasks]]
    if args.corpus:
        trial_dirs += [("corpus", Path(p)) for p in discover_tasks([args.corpus])]
    if args.no_trials or not trial_dirs:
        return
    backend = make_backend(args.backend, host)
    runner = TrialRunner(backend, host=host)
    no_gpu = host_gpus().count == 0
    rows = []
    with hc.stand_ins(hc.base_images(p for _, p in trial_dirs)):
        for domain, path in trial_dirs:
            gpus = 0 if no_gpu and domain == "gpu_kernels" else None
            theirs = {a: hc.run_trial(harbor, path, a, work / "jobs", gpus=gpus) for a in ("oracle", "nop")}
            mine = asyncio.run(ours(runner, host, path))
            rows.append((path.name, theirs, mine))
            print(f"{path.name}: harbor oracle {theirs['oracle'].reward} ({theirs['oracle'].seconds:.1f} s), "
                  f"nop {theirs['nop'].reward} ({theirs['nop'].seconds:.1f} s); ours ({args.backend}) oracle "
                  f"{mine['oracle'][0]} ({mine['oracle'][1]:.1f} s), nop {mine['nop'][0]} ({mine['nop'][1]:.1f} s)"
                  + "".join(f"; harbor {a} error: {t.error[:160]}" for a, t in theirs.items() if t.error), flush=True)
    asyncio.run(backend.aclose())
    h_oracle = statistics.median(t["oracle"].seconds for _, t, _ in rows)
    o_oracle = statistics.median(m["oracle"][1] for _, _, m in rows)
    h_admit = statistics.median(t["oracle"].seconds + t["nop"].seconds for _, t, _ in rows)
    o_admit = statistics.median(m["oracle"][1] + m["nop"][1] for _, _, m in rows)
    print(f"median over {len(rows)} tasks: oracle trial harbor {h_oracle:.1f} s vs ours {o_oracle:.1f} s "
          f"({h_oracle / o_oracle:.1f}x); oracle + nop {h_admit:.1f} s vs {o_admit:.1f} s ({h_admit / o_admit:.1f}x)")


if __name__ == "__main__":
    main()

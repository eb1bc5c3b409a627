"""Throughput, overheads and admission rate of the computer_use domain on this machine (bwrap).

1. Per-attempt overhead, median of --runs fresh sandboxes of one task, next to a plain sandbox of a
   terminal task (the baseline, side by side): sandbox start (its ENTRYPOINT starts the web app and
   the browser service, and the start waits until both answer), the browser's first page (Chromium
   launched by the service on first use, then the page), a warm command, and the state interface's
   reset (as the server times it, and the round trip from a command in the sandbox).
2. Attempts per minute: oracle attempts (a Playwright script through the UI, then the verifier) and
   nop attempts through the trial runner, --jobs at a time.
3. Admission: --admit tasks cycling through every family and difficulty through gates 1-8 (lint,
   build, oracle, null, reset, flakiness, decontamination, near-duplicate) and the domain's own
   (computer-use-lint, computer-use-state). Reports go to --log as JSON lines; a rerun with the same
   --log skips what is there, so an interrupted run resumes.
4. Reference solutions (--solutions N, off by default): one run of each of three families' solution
   in a fresh sandbox, the web app with TCP_NODELAY (as shipped) and without it (Nagle's algorithm:
   a kept-alive answer's body waits for the browser's delayed ACK), alternating, N rounds after a
   warm-up; wall seconds and the machine's CPU seconds (/proc/stat, so run it on a quiet machine).
5. The browser's floor (--floor N, off by default): in N fresh sandboxes after a warm-up, a
   Playwright script that starts the driver and Chromium, loads one page and closes (the machine's
   CPU seconds for all of it), then the same step by step with a fresh context on the running browser
   (what a browser shared by a task's attempts would pay per attempt), each with node's compile cache
   as the image ships it and without it, alternating; then the CPU per further page load: a `goto`
   alone, and a `goto` with a locator query on the new document (20 of each). What any browser run
   of an attempt pays.

    .venv/bin/python bench/bench_computer_use.py [--runs 5] [--attempts 10] [--admit 150] [--jobs 2]
    .venv/bin/python bench/bench_computer_use.py --runs 0 --attempts 0 --admit 0 --solutions 5
    .venv/bin/python bench/bench_computer_use.py --runs 0 --attempts 0 --admit 0 --floor 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

from admission_table import DIFFICULTIES, summarise
from autoenvscaling_computer_use.domain import ComputerUseDomain
from autoenvscaling_computer_use.families import CATALOG



def specs(n: int, offset: int) -> list[tuple[str, int, str]]:
    families = list(CATALOG)
    return [(families[i % len(families)], offset + i, DIFFICULTIES[(i // len(families)) % 3]) for i in range(n)]


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


async def overheads(runs: int) -> dict:
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling.testing import ToyDomain

    task = ComputerUseDomain().generate("crm_search_edit", seed=900, difficulty="easy")
    baseline = ToyDomain().generate("count-lines", seed=1, difficulty="easy")
    backend = make_backend("bwrap")
    key = task.files["tests/state.key"].text.strip()
    rows: dict[str, list[float]] = defaultdict(list)
    try:
        for t in (task, baseline):  # build both images first: the figures are warm
            await backend.prepare(t)
        for _ in range(runs):
            prepared = await backend.prepare(baseline)
            t0 = time.perf_counter()
            sb = await backend.create(baseline, prepared)
            await sb.start()
            rows["baseline_start"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await sb.exec("true", timeout=30)
            rows["baseline_exec"].append(time.perf_counter() - t0)
            await sb.close()

            prepared = await backend.prepare(task)
            t0 = time.perf_counter()
            sb = await backend.create(task, prepared)
            await sb.start()
            rows["app_start"].append(time.perf_counter() - t0)
            try:
                t0 = time.perf_counter()
                first = await sb.exec("aes-browser goto http://127.0.0.1:8080/contacts", timeout=60)
                rows["browser_first_page"].append(time.perf_counter() - t0)
                assert first.exit_code == 0, first.stdout + first.stderr
                status = json.loads((await sb.exec("aes-browser status", timeout=30)).stdout)
                rows["chromium_launch_in_service"].append(status["launch_ms"] / 1000)
                t0 = time.perf_counter()
                await sb.exec("aes-browser observe", timeout=30)
                rows["browser_warm_command"].append(time.perf_counter() - t0)
                await sb.upload_files({"k": key.encode()}, "/tmp/bench")
                t0 = time.perf_counter()
                reset = await sb.exec("python3 /opt/aes/webapp.py ask reset --key-file /tmp/bench/k", timeout=30)
                rows["reset_round_trip"].append(time.perf_counter() - t0)
                rows["reset_in_server"].append(json.loads(reset.stdout)["reset_ms"] / 1000)
            finally:
                await sb.close()
    finally:
        await backend.aclose()
    print(f"\nper-attempt overhead, median of {runs} fresh sandboxes (bwrap, warm image):")
    labels = {"baseline_start": "plain sandbox start (terminal task: the baseline)",
              "baseline_exec": "plain sandbox: one command",
              "app_start": "computer-use sandbox start (app + browser service up)",
              "browser_first_page": "first page (Chromium launch + page load), from a command",
              "chromium_launch_in_service": "  of which the Chromium launch",
              "browser_warm_command": "a browser command once warm (observe)",
              "reset_round_trip": "state reset, round trip from a command",
              "reset_in_server": "  of which the reset in the server"}
    out = {}
    for key_, label in labels.items():
        value = med(rows[key_])
        out[key_] = value
        print(f"  {label:<60} {value * 1000:8.1f} ms")
    print(f"  ratio: computer-use start / plain start = {out['app_start'] / out['baseline_start']:.1f}x")
    return out


async def attempts(n: int, jobs: int) -> dict:
    from autoenvscaling.agents.builtin import NopAgent, OracleAgent
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.select import make_backend

    domain = ComputerUseDomain()
    tasks = [domain.generate(f, seed=700 + i, difficulty="easy") for i, (f, _, _) in enumerate(specs(n, 0))]
    backend = make_backend("bwrap")
    runner = TrialRunner(backend, host=create_host())
    for t in tasks:
        await backend.prepare(t)
    out = {}
    try:
        for agent in (OracleAgent(), NopAgent()):
            sem = asyncio.Semaphore(jobs)
            walls: list[float] = []

            async def one(t):
                async with sem:
                    t0 = time.perf_counter()
                    r = await runner.run(t, agent)
                    walls.append(time.perf_counter() - t0)
                    return r

            t0 = time.perf_counter()
            results = await asyncio.gather(*(one(t) for t in tasks))
            seconds = time.perf_counter() - t0
            rewards = [r.reward for r in results]
            per_minute = len(tasks) / seconds * 60
            out[agent.name] = {"per_minute": per_minute, "median_s": med(walls), "rewards": rewards}
            print(f"  {agent.name:<7} {len(tasks)} attempts with {jobs} jobs: {per_minute:5.1f} attempts/minute, "
                  f"{med(walls):.2f} s median; rewards {Counter(rewards)}")
    finally:
        await backend.aclose()
    return out


def machine_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy (every process: the solution, Chromium, the app)."""
    with open("/proc/stat") as fh:
        ticks = [int(x) for x in fh.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait


NODELAY = "disable_nagle_algorithm = True"


async def solutions(rounds: int) -> dict:
    from autoenvscaling.sandbox.select import make_backend

    backend = make_backend("bwrap")
    rows: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    try:
        for family in ("shop_checkout", "crm_form_fill", "kanban_bulk"):
            shipped = ComputerUseDomain().generate(family, seed=5, difficulty="medium")
            app = shipped.files["environment/aes/webapp.py"].text
            assert NODELAY in app, "the web app no longer sets TCP_NODELAY where this bench expects it"
            nagle = shipped.with_files({"environment/aes/webapp.py": app.replace(NODELAY, "disable_nagle_algorithm = False")})
            solution = {p[len("solution/"):]: f.data for p, f in shipped.files.items() if p.startswith("solution/")}
            for round_ in range(rounds + 1):  # round 0 builds both images and is left out
                for label, task in (("TCP_NODELAY", shipped), ("Nagle", nagle)):
                    sb = await backend.create(task, await backend.prepare(task))
                    await sb.start()
                    try:
                        await sb.upload_files(solution, "/solution")
                        c0, t0 = machine_cpu_s(), time.perf_counter()
                        run = await sb.exec("cd /solution && HOME=/tmp python3 solve.py", timeout=300)
                        wall, cpu = time.perf_counter() - t0, machine_cpu_s() - c0
                    finally:
                        await sb.close()
                    if run.exit_code != 0:
                        raise SystemExit(f"{family}'s reference solution failed: {run.stderr[-500:]}")
                    if round_:
                        rows[(family, label)].append((wall, cpu))
    finally:
        await backend.aclose()
    print(f"\nreference solutions, median of {rounds} fresh sandboxes each (wall / CPU seconds of the machine):")
    out = {}
    for family in ("shop_checkout", "crm_form_fill", "kanban_bulk"):
        cells = []
        for label in ("TCP_NODELAY", "Nagle"):
            wall, cpu = med([w for w, _ in rows[(family, label)]]), med([c for _, c in rows[(family, label)]])
            out[f"{family}/{label}"] = {"wall_s": wall, "cpu_s": cpu}
            cells.append(f"{label} {wall:.2f} / {cpu:.2f}")
        print(f"  {family:<15} " + ", ".join(cells))
    return out


FLOOR_START = """
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium-headless-shell", args=["--no-sandbox", "--disable-gpu"])
    page = b.new_page(viewport={"width": 1280, "height": 800})
    page.goto("http://127.0.0.1:8080/cart")
    b.close()
"""

# The same start, step by step (each step's CPU of the machine), then what a browser shared by a
# task's attempts would pay per attempt instead: a fresh context (its own profile) with a page on the
# browser already running, one page loaded, the context closed.
FLOOR_STEPS = """
import json, os
def cpu():
    with open("/proc/stat") as fh:
        t = [int(x) for x in fh.readline().split()[1:]]
    return (sum(t) - t[3] - t[4]) / os.sysconf("SC_CLK_TCK")
out, c = {}, cpu()
def step(name):
    global c
    now = cpu()
    out[name], c = now - c, now
from playwright.sync_api import sync_playwright
step("import")
p = sync_playwright().start()
step("driver")
b = p.chromium.launch(executable_path="/usr/bin/chromium-headless-shell", args=["--no-sandbox", "--disable-gpu"])
step("launch")
page = b.new_page(viewport={"width": 1280, "height": 800})
page.goto("http://127.0.0.1:8080/cart")
step("first_page")
for _ in range(5):
    context = b.new_context(viewport={"width": 1280, "height": 800})
    context.new_page().goto("http://127.0.0.1:8080/cart")
    context.close()
step("fresh_context_x5")
b.close()
p.stop()
step("close")
out["fresh_context"] = out.pop("fresh_context_x5") / 5
print(json.dumps(out))
"""

FLOOR_PAGES = """
import json, os
from playwright.sync_api import sync_playwright
def cpu():
    with open("/proc/stat") as fh:
        t = [int(x) for x in fh.readline().split()[1:]]
    return (sum(t) - t[3] - t[4]) / os.sysconf("SC_CLK_TCK")
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium-headless-shell", args=["--no-sandbox", "--disable-gpu"])
    page = b.new_page(viewport={"width": 1280, "height": 800})
    page.goto("http://127.0.0.1:8080/cart")
    c0 = cpu()
    for _ in range(20):
        page.goto("http://127.0.0.1:8080/cart")
    c1 = cpu()
    for _ in range(20):
        page.goto("http://127.0.0.1:8080/products")
        page.get_by_role("link", name="Next page").count()
    c2 = cpu()
    b.close()
print(json.dumps({"goto": (c1 - c0) / 20, "goto_locator": (c2 - c1) / 20}))
"""

#: how a floor script runs: with the image's compile cache for node (as shipped), and without it
NODE_CACHE = {"cache": "", "no_cache": "env -u NODE_COMPILE_CACHE "}


async def floor(rounds: int) -> dict:
    from autoenvscaling.sandbox.select import make_backend

    backend = make_backend("bwrap")
    task = ComputerUseDomain().generate("shop_checkout", seed=5, difficulty="medium")
    rows: dict[str, list[float]] = defaultdict(list)
    try:
        for round_ in range(rounds + 1):  # round 0 builds the image and is left out
            sb = await backend.create(task, await backend.prepare(task))
            await sb.start()
            try:
                await sb.upload_files({"start.py": FLOOR_START.encode(), "steps.py": FLOOR_STEPS.encode(),
                                       "pages.py": FLOOR_PAGES.encode()}, "/tmp/floor")
                order = list(NODE_CACHE) if round_ % 2 else list(NODE_CACHE)[::-1]  # alternating
                runs = []
                for label in order:
                    c0 = machine_cpu_s()
                    start = await sb.exec(f"cd /tmp/floor && HOME=/tmp {NODE_CACHE[label]}python3 start.py", timeout=300)
                    rows[f"start_one_page_close_cpu_s/{label}"].append(machine_cpu_s() - c0)
                    steps = await sb.exec(f"cd /tmp/floor && HOME=/tmp {NODE_CACHE[label]}python3 steps.py", timeout=300)
                    runs += [start, steps]
                    if steps.exit_code == 0:
                        for key, value in json.loads(steps.stdout.strip().splitlines()[-1]).items():
                            rows[f"{key}_cpu_ms/{label}"].append(value * 1000)
                pages = await sb.exec("cd /tmp/floor && HOME=/tmp python3 pages.py", timeout=300)
            finally:
                await sb.close()
            failed = [r for r in [*runs, pages] if r.exit_code != 0]
            if failed:
                raise SystemExit(f"the floor's scripts failed: {failed[0].stderr[-500:]}")
            if round_:
                per_page = json.loads(pages.stdout.strip().splitlines()[-1])
                rows["goto_cpu_ms"].append(per_page["goto"] * 1000)
                rows["goto_locator_cpu_ms"].append(per_page["goto_locator"] * 1000)
            else:
                rows = defaultdict(list)  # the warm-up round's figures are left out
    finally:
        await backend.aclose()
    out = {key: med(values) for key, values in rows.items()}
    print(f"\nthe browser's floor, median of {rounds} fresh sandboxes (the machine's CPU), with node's compile cache"
          " as the image ships it / without it:")
    print("  Playwright and Chromium started, one page, closed  "
          + " / ".join(f"{out[f'start_one_page_close_cpu_s/{label}']:.2f} s" for label in NODE_CACHE))
    for key, what in (("import", "import playwright"), ("driver", "Playwright's driver started"),
                      ("launch", "Chromium launched"), ("first_page", "a page opened and loaded"),
                      ("close", "Chromium and the driver closed")):
        print(f"    {what:<44}" + " / ".join(f"{out[f'{key}_cpu_ms/{label}']:.0f} ms" for label in NODE_CACHE))
    print(f"  a fresh context on a running browser (what a browser shared by a task's attempts would pay per attempt"
          f" instead of the launch, the first page and the close): {out['fresh_context_cpu_ms/cache']:.0f} ms")
    print(f"  each further page load: goto {out['goto_cpu_ms']:.0f} ms, goto + a locator query {out['goto_locator_cpu_ms']:.0f} ms")
    return out


async def admission(n: int, jobs: int, seed: int, log: Path) -> dict:
    from autoenvscaling.executors.base import LocalExecutor
    from autoenvscaling.gates.validate import Validator, validate_many
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    domain = ComputerUseDomain()
    host = create_host()
    backend = make_backend("bwrap", host)
    validator = Validator(host=host, backend=backend)
    done = {}
    if log.exists():
        for line in log.read_text().splitlines():
            row = json.loads(line)
            done[row["name"]] = row
    tasks = [domain.generate(f, seed=s, difficulty=d) for f, s, d in specs(n, seed)]
    todo = [t for t in tasks if t.name not in done]
    print(f"\nadmission: {len(todo)} tasks to validate ({len(tasks) - len(todo)} already in {log})")
    start = time.perf_counter()
    with log.open("a") as fh:
        async with LocalExecutor(concurrency=jobs) as executor:
            async for report in validate_many(todo, validator=validator, executor=executor):
                task = next(t for t in todo if t.name == report.name)
                state = next((g for g in report.gates if g.name == "computer-use-state"), None)
                row = {"name": report.name, "family": task.provenance.family, "difficulty": task.provenance.difficulty,
                       "status": report.status, "reason": report.reason, "seconds": round(report.seconds, 2),
                       "state": state.reason if state else ""}
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                done[report.name] = row
                print(f"  [{len(done)}/{len(tasks)}] {report.name}: {report.status} {report.seconds:.1f}s {row['state']}", flush=True)
    seconds = time.perf_counter() - start
    await backend.aclose()
    rows = [done[t.name] for t in tasks]
    return summarise(rows, validated=len(todo), seconds=seconds, jobs=jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh sandboxes for the overhead figures (0 skips)")
    parser.add_argument("--attempts", type=int, default=12, help="oracle and nop attempts for attempts/minute (0 skips)")
    parser.add_argument("--admit", type=int, default=150, help="tasks to validate (0 skips admission)")
    parser.add_argument("--jobs", type=int, default=2, help="attempts or validations at once")
    parser.add_argument("--seed", type=int, default=0, help="first seed of the admitted tasks")
    parser.add_argument("--solutions", type=int, default=0,
                        help="rounds of the reference solutions with and without TCP_NODELAY (0 skips)")
    parser.add_argument("--floor", type=int, default=0,
                        help="fresh sandboxes for the browser's floor: start + one page + close, CPU per page (0 skips)")
    parser.add_argument("--log", type=Path, default=Path("bench-computer-use.jsonl"), help="per-task reports (resume)")
    args = parser.parse_args()
    out: dict = {}
    if args.runs:
        out["overhead_s"] = asyncio.run(overheads(args.runs))
    if args.attempts:
        print("\nattempts per minute:")
        out["attempts"] = asyncio.run(attempts(args.attempts, args.jobs))
    if args.solutions:
        out["solutions"] = asyncio.run(solutions(args.solutions))
    if args.floor:
        out["floor"] = asyncio.run(floor(args.floor))
    if args.admit:
        out.update(asyncio.run(admission(args.admit, args.jobs, args.seed, args.log)))
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()

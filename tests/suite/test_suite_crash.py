"""Crash safety with real SIGKILLs: a writer process adding tasks in a loop is killed at random
moments, reopened and resumed, until it finishes. The suite must end with exactly the expected
tasks: none lost, none twice, no partial folders, dataset.toml pinning the digests the files give."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from pathlib import Path

from autoenvscaling.suite.store import SuiteStore

N_TASKS = 100
KILLS = 12

# The writer: adds task i under key "proposal-i", in order, skipping nothing (a rerun relies on
# idempotency). Pairs of tasks share a name, so every odd one is stored renamed ("t-k-2").
# Odd runs use batch mode, where dataset.toml is written only at the end (a kill leaves it stale).
WRITER = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[4])
    from conftest import build_task
    from autoenvscaling.suite.store import SuiteStore

    store = SuiteStore(sys.argv[1])
    print("open", flush=True)
    n, batch = int(sys.argv[2]), sys.argv[3] == "batch"

    def run():
        for i in range(n):
            result = store.add(build_task(f"t-{i // 2}", f"body {i}", domain="terminal", tags=[f"g{i % 3}"]),
                               key=f"proposal-{i}")
            print("new" if result.new else "old", flush=True)

    if batch:
        with store.batch():
            run()
    else:
        run()
    print("done", flush=True)
''')


def expected_name(i: int) -> str:
    return f"t-{i // 2}" + ("-2" if i % 2 else "")


def test_sigkill_at_random_moments_then_resume(tmp_path: Path, make_task) -> None:  # noqa: ANN001
    suite = tmp_path / "suite"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    rng = random.Random(1234)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    kills = 0
    leftovers = dict.fromkeys(("pending_without_dir", "pending_with_dir", "temp_dirs", "orphan_dirs", "stale_manifest"), 0)
    progress: list[int] = []
    runs = 0
    time_to_open = 0.5  # measured on each run that gets to open
    while kills < KILLS:
        runs += 1
        assert runs < 4 * KILLS, "the writer kept finishing before it could be killed"
        mode = "batch" if runs % 2 else "plain"
        proc = subprocess.Popen([sys.executable, str(script), str(suite), str(N_TASKS), mode, str(Path(__file__).parent)],
                                stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        started = time.monotonic()
        if runs % 3 == 0:
            # Somewhere in start-up or the repair done on open (as long as the last run took to open).
            time.sleep(rng.uniform(0.0, 1.1 * time_to_open))
        else:
            assert proc.stdout.readline().strip() == "open"
            time_to_open = time.monotonic() - started
            # Let 1-4 new tasks land (re-adds of earlier runs' tasks are skipped), then kill at a
            # random moment of the next add: few tasks per run, whatever the machine's speed.
            wanted = rng.randint(1, 4)
            while wanted and (line := proc.stdout.readline().strip()) not in ("done", ""):
                wanted -= line == "new"
            time.sleep(rng.uniform(0.0, 0.03))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.returncode != -signal.SIGKILL:
            assert proc.returncode == 0
            continue
        kills += 1
        _count_leftovers(suite, leftovers)
        with SuiteStore.open(suite) as store:
            keys = [r.key for r in store.filter()]
            # No hole, nothing twice: the keys stored are always proposal-0 .. proposal-(m-1).
            assert keys == [f"proposal-{i}" for i in range(len(keys))]
            assert store.verify() == []
            progress.append(len(keys))

    done = subprocess.run([sys.executable, str(script), str(suite), str(N_TASKS), "plain", str(Path(__file__).parent)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    print(f"\n{kills} kills in {runs} runs; tasks stored after each kill: {progress}; leftovers seen: {leftovers}")
    assert progress[-1] < N_TASKS  # every kill landed before the writer was done

    with SuiteStore.open(suite) as store:
        records = store.filter()
        assert [r.key for r in records] == [f"proposal-{i}" for i in range(N_TASKS)]
        assert [r.name for r in records] == [expected_name(i) for i in range(N_TASKS)]
        for i in (0, 1, N_TASKS - 1):
            original = make_task(f"t-{i // 2}", f"body {i}", domain="terminal", tags=[f"g{i % 3}"])
            stored = store.get(expected_name(i))
            assert stored.files == original.files and stored.instruction == original.instruction
            assert stored.config.metadata == original.config.metadata
        assert store.verify() == []
        digests = {r.name: r.digest for r in records}
    tasks_dir = suite / "tasks"
    assert sorted(p.name for p in tasks_dir.iterdir()) == sorted(r.dir for r in records)  # no temp or partial dirs
    assert not (suite / "quarantine").exists()
    manifest = tomllib.loads((suite / "dataset.toml").read_text())
    assert [(t["name"], t["digest"]) for t in manifest["tasks"]] == list(digests.items())


def _count_leftovers(suite: Path, seen: dict[str, int]) -> None:
    """What a kill left behind, looked at before the next open repairs it (reported, not asserted:
    where a random kill lands is random)."""
    import sqlite3

    tasks_dir = suite / "tasks"
    if not (suite / "index.sqlite").exists():
        return
    db = sqlite3.connect(suite / "index.sqlite")
    try:
        rows = db.execute("SELECT dir, state, digest FROM tasks ORDER BY seq").fetchall()
    finally:
        db.close()
    dirs = {p.name for p in tasks_dir.iterdir()} if tasks_dir.exists() else set()
    pending = [d for d, state, _ in rows if state == "pending"]
    seen["pending_without_dir"] += sum(1 for d in pending if d not in dirs)
    seen["pending_with_dir"] += sum(1 for d in pending if d in dirs)
    seen["temp_dirs"] += sum(1 for d in dirs if d.startswith("."))
    seen["orphan_dirs"] += len({d for d in dirs if not d.startswith(".")} - {r[0] for r in rows})
    manifest = suite / "dataset.toml"
    listed = [t["digest"] for t in tomllib.loads(manifest.read_text()).get("tasks", [])] if manifest.exists() else []
    seen["stale_manifest"] += listed != [digest for _, state, digest in rows if state == "ready"]


def test_two_writer_processes_at_once(tmp_path: Path) -> None:
    """Two processes add overlapping task lists to one suite concurrently: each task once."""
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent('''
        import sys
        sys.path.insert(0, sys.argv[3])
        from conftest import build_task
        from autoenvscaling.suite.store import SuiteStore

        store = SuiteStore(sys.argv[1])
        ids = [int(x) for x in sys.argv[2].split(",")]
        for i in ids:
            store.add(build_task(f"w-{i}", f"body {i}"), key=f"k-{i}")
    '''))
    here = str(Path(__file__).parent)
    lists = [",".join(map(str, range(0, 30))), ",".join(map(str, range(29, -1, -1))) + ",30,31,32"]
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "suite"), ids, here]) for ids in lists]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with SuiteStore.open(tmp_path / "suite") as store:
        assert sorted(r.key for r in store.filter()) == sorted(f"k-{i}" for i in range(33))
        assert store.verify() == []

"""``suite export --format harbor`` writes a dataset Harbor 0.26 itself loads: dataset.toml in Harbor's
schema, pinning every task by Harbor's content hash, which the reader checks on import.

The fast tests need no Harbor. The slow one has Harbor (installed once into the test cache as the
slow client tests do, or the venv at AUTOENVSCALING_HARBOR_VENV) load the export, recompute every
digest, and notice a tampered task.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import textwrap
import tomllib
from pathlib import Path

import pytest

from autoenvscaling.cli.main import main
from autoenvscaling.errors import TaskFormatError
from autoenvscaling.suite.harbor_format import HarborFormat, harbor_digest, harbor_dir_digest
from autoenvscaling.suite.manifest import Manifest, ManifestEntry
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.tasks import Task, TaskFile, read_task, render_config

DOCKERFILE = "FROM debian:bookworm-slim\nWORKDIR /app\n"
COOKBOOK = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "harbor-cookbook"


def demo(name: str = "autoenvscaling/demo-1", body: str = "hello",
         extra: dict[str, str | bytes | TaskFile] | None = None) -> Task:
    """A small complete task named ``name`` whose content depends on ``body``."""
    config = {"schema_version": "1.1", "task": {"name": name, "description": f"demo {body}"},
              "verifier": {"timeout_sec": 30.0}}
    files: dict[str, str | bytes | TaskFile] = {
        "tests/test.sh": f"#!/bin/bash\ngrep -qx '{body}' /app/out.txt && echo 1 > /logs/verifier/reward.txt "
                         "|| echo 0 > /logs/verifier/reward.txt\n",
        "environment/Dockerfile": DOCKERFILE,
        "solution/solve.sh": f"#!/bin/bash\necho '{body}' > /app/out.txt\n",
        **(extra or {}),
    }
    return Task.create(name, config, f"Write {body!r} to /app/out.txt.\n", files)


def by_hand(entries: dict[str, bytes]) -> str:
    """Harbor's content hash written out from its definition: sha256 over "<path>\\0<sha256 of file>\\n"
    lines in path order."""
    lines = "".join(f"{p}\0{hashlib.sha256(entries[p]).hexdigest()}\n" for p in sorted(entries))
    return "sha256:" + hashlib.sha256(lines.encode()).hexdigest()


def pins(dataset: Path) -> dict[str, str]:
    return {t["name"]: t["digest"] for t in tomllib.loads((dataset / "dataset.toml").read_text())["tasks"]}


def run(capsys, *argv: str) -> tuple[int, str, str]:  # noqa: ANN001
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# ── fast: no Harbor needed ───────────────────────────────────────────────────────────────────────

def test_export_writes_harbors_manifest(tmp_path: Path) -> None:
    tasks = [demo("autoenvscaling/demo-1", "one"), demo("autoenvscaling/demo-2", "two")]
    dataset = HarborFormat(dataset_description="two demos").write(tasks, tmp_path / "ds")
    data = tomllib.loads((dataset / "dataset.toml").read_text())
    assert set(data) == {"schema_version", "dataset", "tasks"} and data["schema_version"] == "1.0"
    # A bare dataset name is put under the org all tasks share.
    assert data["dataset"] == {"name": "autoenvscaling/ds", "description": "two demos"}
    assert [set(t) for t in data["tasks"]] == [{"name", "digest"}] * 2
    assert [t["name"] for t in data["tasks"]] == ["autoenvscaling/demo-1", "autoenvscaling/demo-2"]
    assert sorted(p.name for p in dataset.iterdir()) == ["dataset.toml", "demo-1", "demo-2"]
    for task, entry in zip(tasks, data["tasks"]):
        folder = dataset / task.name.split("/")[1]
        assert entry["digest"] == harbor_digest(task) == harbor_dir_digest(folder) != task.digest()
        assert tomllib.loads((folder / "task.toml").read_text())["task"]["name"] == task.name


def test_harbor_digest_is_harbors_content_hash(tmp_path: Path) -> None:
    task = demo()
    hashed = {"task.toml": render_config(task).encode(), "instruction.md": task.instruction.encode(),
              **{p: f.data for p, f in task.files.items()}}
    assert harbor_digest(task) == by_hand(hashed)
    # Files Harbor does not hash (outside its folders, caches, editor files) leave the digest alone ...
    ignored = task.with_files({"notes/todo.txt": "x", "config.yaml": "a: 1\n",
                               "tests/__pycache__/t.cpython-312.pyc": b"\0", "tests/helper.pyc": b"\0", "environment/.DS_Store": b"\0", "solution/solve.sh~": "old",
                               "tests/.harborignore": "# no rules\n"})
    assert harbor_digest(ignored) == harbor_digest(task)
    # ... files it does hash change it; the executable bit does not (Harbor hashes bytes only).
    more = task.with_files({"README.md": "# demo\n", "tests/data/in.txt": "1\n", "steps/a/workdir/x": "y"})
    assert harbor_digest(more) == by_hand({**hashed, "README.md": b"# demo\n", "tests/data/in.txt": b"1\n",
                                           "steps/a/workdir/x": b"y"})
    flipped = task.with_files({"tests/test.sh": TaskFile(data=task.files["tests/test.sh"].data, executable=False)})
    assert flipped.digest() != task.digest() and harbor_digest(flipped) == harbor_digest(task)
    # Written to disk and read back, the same digest.
    dataset = HarborFormat().write([more], tmp_path / "ds")
    assert harbor_dir_digest(dataset / "demo-1") == harbor_digest(more) == pins(dataset)["autoenvscaling/demo-1"]


def test_a_changed_file_changes_the_digest_and_import_names_the_task(tmp_path: Path) -> None:
    dataset = HarborFormat().write([demo("autoenvscaling/demo-1", "one"), demo("autoenvscaling/demo-2", "two")],
                                   tmp_path / "ds")
    pinned = pins(dataset)["autoenvscaling/demo-1"]
    test_sh = dataset / "demo-1" / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text() + "echo 1 > /logs/verifier/reward.txt\n")
    now = harbor_dir_digest(dataset / "demo-1")
    assert now != pinned
    with pytest.raises(TaskFormatError) as exc:
        list(HarborFormat().read(dataset))
    assert exc.value.message == (f"autoenvscaling/demo-1: digest mismatch: dataset.toml pins {pinned}, "
                                 f"its files give {now}")
    assert exc.value.hint and "re-export" in exc.value.hint
    scanned = list(HarborFormat().scan(dataset))  # a batch import goes on past it
    assert [type(x).__name__ for x in scanned] == ["TaskFormatError", "Task"]


def test_round_trip_gives_equal_tasks(tmp_path: Path) -> None:
    tasks = [demo("autoenvscaling/demo-1", "one"),
             demo("lab/demo-2", "two", {"tests/data.bin": TaskFile(data=b"\xff\x00raw", executable=False),
                                        "notes/outside-harbors-folders.txt": "kept\n"})]
    dataset = HarborFormat().write(tasks, tmp_path / "ds")
    back = list(HarborFormat().read(dataset))
    assert back == tasks and [t.digest() for t in back] == [t.digest() for t in tasks]
    # Two orgs: the dataset is named under the default org.
    assert tomllib.loads((dataset / "dataset.toml").read_text())["dataset"]["name"] == "autoenvscaling/ds"


def test_older_manifests_pinning_our_digest_still_import(tmp_path: Path) -> None:
    """Exports made before we pinned Harbor's digest (and a suite's own dataset.toml) pin Task.digest()."""
    task = demo()
    dataset = HarborFormat().write([task], tmp_path / "ds")
    old = Manifest(name="ds", tasks=[ManifestEntry(name=task.name, digest=task.digest())])
    (dataset / "dataset.toml").write_text(old.render())
    assert list(HarborFormat().read(dataset)) == [task]
    (dataset / "demo-1" / "instruction.md").write_text("tampered\n")
    with pytest.raises(TaskFormatError) as exc:
        list(HarborFormat().read(dataset))
    assert exc.value.message.startswith(f"autoenvscaling/demo-1: digest mismatch: dataset.toml pins {task.digest()}, ")


def test_bare_names_need_an_org(tmp_path: Path) -> None:
    bare = demo("demo", "one")
    with pytest.raises(TaskFormatError) as exc:
        HarborFormat().write([bare], tmp_path / "ds")
    assert exc.value.message == "demo: Harbor's dataset.toml lists tasks as org/name" and "--org" in exc.value.hint
    assert not any(tmp_path.iterdir())  # nothing half-written is left behind
    dataset = HarborFormat("my suite", org="lab").write([bare], tmp_path / "ds")
    assert pins(dataset) == {"lab/demo": harbor_dir_digest(dataset / "demo")}
    assert tomllib.loads((dataset / "dataset.toml").read_text())["dataset"]["name"] == "lab/my-suite"
    (back,) = HarborFormat().read(dataset)
    assert back.name == "lab/demo" and back.config.task.name == "lab/demo"
    with pytest.raises(TaskFormatError, match="another exported task is already named lab/demo"):
        HarborFormat(org="lab").write([bare, demo("lab/demo", "two")], tmp_path / "ds2")


def test_own_ignore_rules_are_refused_not_guessed(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="has a .gitignore, whose rules change Harbor's digest"):
        harbor_digest(demo(extra={".gitignore": "*.log\n"}))
    with pytest.raises(TaskFormatError, match=r"tests/\.harborignore: \.harborignore rules change Harbor's digest"):
        harbor_digest(demo(extra={"tests/.harborignore": "fixtures/\n"}))
    # An empty .gitignore switches Harbor's default ignores off: a .pyc is then hashed.
    with_pyc = demo(extra={".gitignore": "", "tests/x.pyc": b"\0"})
    assert harbor_digest(with_pyc) != harbor_digest(with_pyc.with_files({"tests/x.pyc": None}))


def test_export_command_org_option(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    with SuiteStore(tmp_path / "suite") as store:
        store.add(demo("autoenvscaling/demo-1", "one"))
        store.add(demo("demo", "two"))
    out = tmp_path / "ds"
    code, _, err = run(capsys, "suite", "export", str(tmp_path / "suite"), "--format", "harbor", "--out", str(out))
    assert code == 2 and err.splitlines()[0] == "error: demo: Harbor's dataset.toml lists tasks as org/name"
    assert err.splitlines()[1].startswith("hint: pass --org ORG") and not out.exists()
    code, stdout, _ = run(capsys, "suite", "export", str(tmp_path / "suite"), "--format", "harbor", "--out", str(out),
                          "--org", "lab", "--json")
    assert code == 0 and json.loads(stdout)["tasks"] == 2
    assert set(pins(out)) == {"autoenvscaling/demo-1", "lab/demo"}
    assert tomllib.loads((out / "dataset.toml").read_text())["dataset"]["name"] == "lab/suite"
    code, _, err = run(capsys, "suite", "export", str(tmp_path / "suite"), "--format", "jsonl", "--out",
                       str(tmp_path / "x.jsonl"), "--org", "lab")
    assert code == 2 and err.startswith("error: --org applies to --format harbor")
    code, _, err = run(capsys, "suite", "export", str(tmp_path / "suite"), "--format", "harbor", "--out",
                       str(tmp_path / "ds3"), "--org", "-bad")
    assert code == 2 and err.startswith("error: --org '-bad' is not a valid Harbor org")


# ── slow: Harbor itself loads the export ─────────────────────────────────────────────────────────

# Run by the Harbor venv's python: Harbor's own manifest model, task config check and content hash.
HARBOR_CHECK = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from harbor.models.dataset.manifest import DatasetManifest
    from harbor.models.task.config import TaskConfig
    from harbor.models.task.task import Task
    from harbor.publisher.packager import Packager

    root = Path(sys.argv[1])
    manifest = DatasetManifest.from_toml_file(root / "dataset.toml")
    tasks = {}
    for folder in sorted(p for p in root.iterdir() if (p / "task.toml").is_file()):
        name = TaskConfig.model_validate_toml((folder / "task.toml").read_text()).task.name
        tasks[name] = {"digest": "sha256:" + Packager.compute_content_hash(folder)[0],
                       "valid": Task.is_valid_dir(folder)}
    print(json.dumps({"dataset": manifest.dataset.name, "pins": {t.name: t.digest for t in manifest.tasks},
                      "tasks": tasks}))
""")


def harbor_venv() -> Path:
    from autoenvscaling.errors import MissingPrerequisite
    from autoenvscaling.testing import harbor_client as hc

    if hc.python312() is None and not (hc.venv_path() / "bin" / "harbor").exists():
        pytest.skip("Harbor needs Python 3.12 and this machine has none (python3.12 on PATH or under pyenv)")
    try:
        return hc.harbor_bin(install=True).parent.parent
    except MissingPrerequisite as exc:
        pytest.skip(exc.message)


def harbor_view(venv: Path, dataset: Path) -> dict:
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", HARBOR_CHECK, str(dataset)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def harbor_sync(venv: Path, dataset: Path) -> str:
    """``harbor sync DIR``: Harbor recomputes every local task's digest and rewrites what changed."""
    proc = subprocess.run([str(venv / "bin" / "harbor"), "sync", str(dataset)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
def test_harbor_loads_the_export_and_verifies_its_digests(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    venv = harbor_venv()
    tasks = [demo("autoenvscaling/demo-1", "one"),
             demo("autoenvscaling/demo-2", "two", {"README.md": "# two\n", "tests/data/in.json": "{}\n",
                                                   "notes/not-hashed.txt": "x\n", "tests/__pycache__/c.pyc": b"\0"})]
    if COOKBOOK.is_dir():  # real Harbor tasks: multi-step, skills, files outside Harbor's folders
        tasks += list(HarborFormat().read(COOKBOOK))  # bare names: exported as harbor/<name>
    with SuiteStore(tmp_path / "suite") as store:
        for task in tasks:
            store.add(task)
    dataset = tmp_path / "ds"
    code, _, err = run(capsys, "suite", "export", str(tmp_path / "suite"), "--format", "harbor", "--out", str(dataset),
                       "--org", "harbor")
    assert code == 0, err

    view = harbor_view(venv, dataset)
    ours = pins(dataset)
    assert view["dataset"] == "harbor/suite" and view["pins"] == ours and len(ours) == len(tasks)
    assert {name: t["digest"] for name, t in view["tasks"].items()} == ours  # Harbor's digests are our pins
    assert all(t["valid"] for t in view["tasks"].values()), view["tasks"]
    synced = tmp_path / "synced"
    shutil.copytree(dataset, synced)
    assert "Updated 0 digest(s)" in harbor_sync(venv, synced) and pins(synced) == ours

    # Positive control: tamper with one task's test after export; Harbor and our reader both notice.
    test_sh = dataset / "demo-2" / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text().replace("'two'", "'anything'"))
    tampered = harbor_view(venv, dataset)["tasks"]["autoenvscaling/demo-2"]["digest"]
    assert tampered != ours["autoenvscaling/demo-2"] and tampered == harbor_dir_digest(dataset / "demo-2")
    with pytest.raises(TaskFormatError) as exc:
        list(HarborFormat().read(dataset))
    assert exc.value.message == (f"autoenvscaling/demo-2: digest mismatch: dataset.toml pins "
                                 f"{ours['autoenvscaling/demo-2']}, its files give {tampered}")
    resynced = tmp_path / "resynced"
    shutil.copytree(dataset, resynced)
    assert "Updated 1 digest(s)" in harbor_sync(venv, resynced)
    assert pins(resynced) == {**ours, "autoenvscaling/demo-2": tampered}
    assert read_task(dataset / "demo-2").name == "autoenvscaling/demo-2"

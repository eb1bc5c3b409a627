"""Import/export formats on the four Harbor cookbook tasks and on synthetic edge cases: every round
trip gives equal tasks with equal digests, unchanged files stay byte-identical, tampering is caught,
and the row files load with the real ``datasets`` library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.errors import TaskFormatError, UsageError
from autoenvscaling.plugins import create_host
from autoenvscaling.suite.harbor_format import HarborFormat
from autoenvscaling.suite.rows import JsonlFormat, ParquetFormat
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.tasks import TaskFile, qualified_name, write_task

COOKBOOK_TASKS = ["multi-reward", "multi-step", "simple-task", "skills"]


def test_formats_are_registered_under_their_names() -> None:
    formats = create_host().formats
    assert formats.get("harbor") is HarborFormat
    assert formats.get("jsonl") is JsonlFormat
    assert formats.get("parquet") is ParquetFormat


def test_cookbook_round_trips_through_every_format(harbor_cookbook: Path, tmp_path: Path, file_tree) -> None:  # noqa: ANN001
    originals = {t.name: t for t in HarborFormat().read(harbor_cookbook)}
    assert len(originals) == 4 and "harbor/hello-multi-step-full" in originals
    store = SuiteStore(tmp_path / "suite")
    for task in originals.values():
        assert store.add(task).new
    # The suite's task folders are byte-identical copies of the cookbook folders.
    for folder in COOKBOOK_TASKS:
        stored_dir = tmp_path / "suite" / "tasks" / ("hello-multi-step-full" if folder == "multi-step" else folder)
        assert file_tree(stored_dir) == file_tree(harbor_cookbook / folder)

    # A Harbor dataset names every task org/name: the cookbook's bare names come back under "harbor/".
    harbor = HarborFormat(store.name, org="harbor").write(store.tasks(), tmp_path / "out-harbor")
    qualified = {qualified_name(n, org="harbor"): t for n, t in originals.items()}
    assert {t.name: t for t in HarborFormat().read(harbor)} == {n: t if n == t.name else t.renamed(n)
                                                                for n, t in qualified.items()}
    exports = {
        "jsonl": JsonlFormat().write(store.tasks(), tmp_path / "out.jsonl"),
        "parquet": ParquetFormat().write(store.tasks(), tmp_path / "out.parquet"),
    }
    for name, path in exports.items():
        fmt = create_host().formats.get(name)()
        assert fmt.detect(path) and fmt.count(path) == 4
        back = {t.name: t for t in fmt.read(path)}
        assert back == originals, name
        assert {n: t.digest() for n, t in back.items()} == {n: t.digest() for n, t in originals.items()}, name
        # Written out again as task folders, they are byte-identical to the cookbook's.
        rewritten = tmp_path / f"rewritten-{name}"
        for task in back.values():
            write_task(task, rewritten / task.name.rsplit("/", 1)[-1])
        for folder in COOKBOOK_TASKS:
            target = "hello-multi-step-full" if folder == "multi-step" else folder
            assert file_tree(rewritten / target) == file_tree(harbor_cookbook / folder), (name, folder)
        # And imported into a second suite they are recognised as the same tasks.
        again = SuiteStore(tmp_path / f"suite-{name}")
        assert all(again.add(t).new for t in back.values())
        assert {r.name: r.digest for r in again.filter()} == {r.name: r.digest for r in store.filter()}


def test_harbor_dataset_digest_mismatch_names_the_task(harbor_cookbook: Path, tmp_path: Path) -> None:
    dataset = HarborFormat(org="harbor").write(HarborFormat().read(harbor_cookbook), tmp_path / "ds")
    (dataset / "simple-task" / "instruction.md").write_text("tampered\n")
    with pytest.raises(TaskFormatError) as exc:
        list(HarborFormat().read(dataset))
    assert exc.value.message.startswith("harbor/simple-task: digest mismatch")
    scanned = list(HarborFormat().scan(dataset))  # a batch import goes on past it
    assert [type(x).__name__ for x in scanned] == ["Task", "Task", "TaskFormatError", "Task"]

    (dataset / "simple-task" / "task.toml").unlink()
    with pytest.raises(TaskFormatError, match="harbor/simple-task: listed in ds/dataset.toml but no task directory"):
        list(HarborFormat().read(dataset))


def test_harbor_reads_single_dirs_folders_and_suites(harbor_cookbook: Path, tmp_path: Path) -> None:
    fmt = HarborFormat()
    (single,) = fmt.read(harbor_cookbook / "simple-task")
    assert single.name == "simple-task"
    store = SuiteStore(tmp_path / "suite")
    store.add(single)
    # A suite is itself a Harbor dataset (dataset.toml + tasks/<name>/).
    assert fmt.detect(tmp_path / "suite") and [t.name for t in fmt.read(tmp_path / "suite")] == ["simple-task"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not fmt.detect(empty)
    with pytest.raises(TaskFormatError, match="no Harbor task directories"):
        list(fmt.read(empty))
    with pytest.raises(UsageError, match="already exists"):
        fmt.write([single], tmp_path / "suite")


def test_rows_keep_binary_files_and_executable_bits(tmp_path: Path, make_task, file_tree) -> None:  # noqa: ANN001
    task = make_task("bin").with_files({"tests/data.bin": TaskFile(data=b"\xff\xfe\x00raw", executable=False),
                                        "tests/run.py": TaskFile(data=b"print(1)\r\n", executable=True)})
    for fmt in (JsonlFormat(), ParquetFormat()):
        path = fmt.write([task], tmp_path / f"rows.{fmt.name}")
        (back,) = fmt.read(path)
        assert back == task and back.digest() == task.digest()
        assert back.files["tests/data.bin"].data == b"\xff\xfe\x00raw"
        assert back.files["tests/run.py"].executable and back.files["tests/run.py"].data.endswith(b"\r\n")
    row = json.loads((tmp_path / "rows.jsonl").read_text())
    encodings = {f["path"]: f["encoding"] for f in row["files"]}
    assert encodings["tests/data.bin"] == "base64" and encodings["tests/test.sh"] == "utf-8"
    assert json.loads(row["metadata"]) == task.config.metadata


def test_rows_reject_tampering_and_report_bad_lines(tmp_path: Path, make_task) -> None:  # noqa: ANN001
    path = JsonlFormat().write([make_task("a"), make_task("b")], tmp_path / "rows.jsonl")
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["instruction"] = "something else\n"
    path.write_text("\n".join([lines[0], "{not json", json.dumps(row)]) + "\n")
    items = list(JsonlFormat().scan(path))
    assert items[0].name == "a"
    assert isinstance(items[1], TaskFormatError) and items[1].message.startswith("rows.jsonl:2: not JSON")
    assert isinstance(items[2], TaskFormatError) and items[2].message.startswith("b: digest mismatch")


def test_datasets_library_loads_the_rows(harbor_cookbook: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no writes to ~/.cache, no hub lookups
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    tasks = list(HarborFormat().read(harbor_cookbook))
    jsonl = JsonlFormat().write(tasks, tmp_path / "rows.jsonl")
    parquet = ParquetFormat().write(tasks, tmp_path / "rows.parquet")
    for kind, path in (("json", jsonl), ("parquet", parquet)):
        ds = datasets.load_dataset(kind, data_files=str(path), split="train", cache_dir=str(tmp_path / f"hf-{kind}"))
        assert ds.num_rows == 4
        assert {"name", "digest", "instruction", "task_toml", "files", "domain", "family", "difficulty", "tags",
                "metadata"} <= set(ds.column_names)
        by_name = {r["name"]: r for r in ds}
        assert by_name["simple-task"]["digest"] == next(t for t in tasks if t.name == "simple-task").digest()
        multi = by_name["harbor/hello-multi-step-full"]
        assert multi["instruction"] is None and multi["difficulty"] == "easy"
        assert "multi-step" in multi["tags"]
        assert {f["path"] for f in multi["files"]} >= {"steps/scaffold/instruction.md", "environment/Dockerfile"}
        # Rows that went through `datasets` still import back to the same tasks.
        rows_again = tmp_path / f"via-datasets-{kind}.jsonl"
        ds.to_json(str(rows_again))
        assert sorted(t.digest() for t in JsonlFormat().read(rows_again)) == sorted(t.digest() for t in tasks)

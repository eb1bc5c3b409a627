"""Fuzzing datasets and suites through ``autoenvscaling suite import`` (JSONL rows, Parquet rows,
Harbor datasets with a dataset.toml), a suite folder holding junk (what opening a suite adopts) and a
domain's ``import`` (``import_tasks``). One bad row or entry is one skipped item with a one-line
reason; the good ones are imported all the same, and the suite stays consistent."""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import strategies as st

from autoenvscaling.cli.main import cli
from autoenvscaling.errors import SuiteError, TaskFormatError
from autoenvscaling.gates.importing import import_tasks
from autoenvscaling.suite.rows import task_to_row
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.tasks import Task, write_task
from autoenvscaling.testing.toy import ToyDomain

from .conftest import Fuzz
from .strategies import (any_text, deep, json_text, junk_bytes, nasty_strings, one_line_error, render_toml, single_line,
                         task_toml_text, text_like, toml_values, words)
from .taskdirs import materialise, task_trees

GOOD = [ToyDomain().generate(family, seed=7) for family in ("write-file", "count-lines")]
GOOD_ROWS = [task_to_row(task) for task in GOOD]


@pytest.fixture(autouse=True)
def _only_builtin_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The formats under test are built in; installed plugins would only add start-up time per case."""
    monkeypatch.setenv("AUTOENVSCALING_LOAD_PLUGINS", "")


def suite_import(*argv: str) -> dict[str, Any] | None:
    """``autoenvscaling suite import ARGV --json``: its JSON, or None when it failed with one of our
    errors (nothing could be read). Anything else is a crash."""
    result = CliRunner().invoke(cli, ["suite", "import", *argv, "--json"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        one_line_error(result.exception)
        return None
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_imported(report: dict[str, Any] | None, suite: Path, tasks: list[Task]) -> None:
    """The good tasks are in the suite, every skipped item has a one-line reason, and the suite reads
    back as written (files, index and dataset.toml agree)."""
    assert report is not None, "the good items were not imported"
    for error in report["errors"]:
        assert single_line(error["error"]), error
    with SuiteStore.open(suite) as store:
        stored = {r.source_digest for r in store.filter()}
        assert {task.digest() for task in tasks} <= stored  # a twin row may have taken a good one's place
        assert store.verify() == []


# -- JSONL rows -------------------------------------------------------------------------------------
file_entries = st.fixed_dictionaries(
    {"path": st.one_of(words, nasty_strings, json_text, st.integers(), st.none(),
                       st.sampled_from(["a", "a/b", "tests/test.sh/x", "environment", "x/", "./x"])),
     "content": st.one_of(json_text, st.integers(), st.none(), st.binary(max_size=20).map(
         lambda b: base64.b64encode(b).decode()), st.just("!!notbase64"))},
    optional={"encoding": st.sampled_from(["utf-8", "base64", "latin-1", None, 7]), "executable": st.one_of(
        st.booleans(), text_like)})
row_fields = {
    "name": st.one_of(words, nasty_strings, json_text, st.integers(), st.none()),
    "task_toml": st.one_of(task_toml_text, json_text, st.integers(), st.none()),
    "instruction": st.one_of(json_text, st.none(), st.integers(), st.lists(st.integers(), max_size=2)),
    "files": st.one_of(st.lists(file_entries, max_size=4), st.none(), json_text, st.dictionaries(words, words, max_size=2)),
    "digest": st.one_of(st.none(), st.just("sha256:" + "0" * 64), text_like),
    "metadata": st.one_of(json_text, toml_values),
}


@st.composite
def rows(draw: st.DrawFn) -> bytes:
    """One line of a JSONL file: junk, JSON that is not a row, or a good row with fields broken."""
    kind = draw(st.sampled_from(["row", "row", "row", "bytes", "json", "deep"]))
    if kind == "bytes":
        return draw(junk_bytes).replace(b"\n", b" ")
    if kind == "json":
        return json.dumps(draw(toml_values.filter(lambda v: not isinstance(v, (dict, list))) | st.lists(st.integers())),
                          default=str).encode()
    if kind == "deep":
        return draw(deep).encode()
    row = dict(draw(st.sampled_from(GOOD_ROWS)))
    for key in draw(st.lists(st.sampled_from(sorted(row_fields)), min_size=1, max_size=3, unique=True)):
        if draw(st.booleans()):
            row[key] = draw(row_fields[key])
        else:
            row.pop(key, None)
    return json.dumps(row, default=str).encode()  # lone surrogates go out as \\ud800 escapes, as in any JSON


def test_jsonl_rows_import(fuzz: Fuzz, tmp_path: Path) -> None:
    @fuzz.given(st.lists(rows(), min_size=1, max_size=4))
    def check(bad: list[bytes]) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            good = [json.dumps(row).encode() for row in GOOD_ROWS]
            (root / "rows.jsonl").write_bytes(b"\n".join([good[0], *bad, good[1]]) + b"\n")
            report = suite_import(str(root / "rows.jsonl"), "--into", str(root / "suite"))
            assert_imported(report, root / "suite", GOOD)
        finally:
            shutil.rmtree(root)

    check()


# -- Parquet rows -----------------------------------------------------------------------------------
def test_parquet_rows_import(fuzz: Fuzz, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    columns = {"name": st.one_of(words, json_text.filter(lambda s: s.encode("utf-8", "replace"))), "task_toml": task_toml_text,
               "instruction": st.one_of(json_text, st.none()), "digest": st.one_of(st.none(), text_like)}

    @fuzz.given(st.lists(st.fixed_dictionaries({}, optional=columns), max_size=3), st.binary(max_size=64),
                fast=5, full=100)
    def check(bad: list[dict[str, Any]], garbage: bytes) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            cleaned = [{k: (v.encode("utf-8", "replace").decode() if isinstance(v, str) else v) for k, v in r.items()}
                       for r in bad]  # Arrow strings are UTF-8
            table = pa.Table.from_pylist([{"name": r.get("name"), "task_toml": r.get("task_toml"),
                                           "instruction": r.get("instruction"), "digest": r.get("digest")}
                                          for r in [*(dict(g) for g in GOOD_ROWS[:1]), *cleaned]])
            pq.write_table(table, root / "rows.parquet")
            suite_import(str(root / "rows.parquet"), "--into", str(root / "suite"))
            (root / "junk.parquet").write_bytes(b"PAR1" + garbage)
            suite_import(str(root / "junk.parquet"), "--into", str(root / "suite2"))
        finally:
            shutil.rmtree(root)

    check()


# -- Harbor datasets (dataset.toml) -------------------------------------------------------------------
@st.composite
def manifests(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 4)) == 0:
        return draw(task_toml_text)  # not a manifest at all
    entries = []
    for task in GOOD:
        entry: dict[str, Any] = {"name": task.name}
        if draw(st.booleans()):
            entry["digest"] = task.digest()
        entries.append(entry)
    junk = st.fixed_dictionaries({}, optional={"name": st.one_of(words, nasty_strings, toml_values),
                                               "digest": st.one_of(text_like, toml_values, st.just("sha256:" + "a" * 64))})
    entries += draw(st.lists(junk, max_size=3))
    entries = draw(st.permutations(entries))
    dataset = draw(st.one_of(st.fixed_dictionaries({}, optional={"name": st.one_of(words, nasty_strings, toml_values),
                                                                  "description": text_like}), toml_values))
    doc: dict[str, Any] = {"dataset": dataset}
    doc["tasks"] = entries if entries else draw(toml_values)
    return render_toml(doc)


def test_harbor_dataset_import(fuzz: Fuzz, tmp_path: Path) -> None:
    @fuzz.given(manifests(), st.lists(task_trees(), max_size=2))
    def check(manifest: str, trees: list[list[Any]]) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            dataset = root / "dataset"
            for task in GOOD:
                write_task(task, dataset / task.name.rsplit("/", 1)[-1])
            for i, tree in enumerate(trees):
                materialise(tree, root / f"bad{i}")
                os.rename(root / f"bad{i}" / "task", dataset / f"bad{i}")
            (dataset / "dataset.toml").write_text(manifest, encoding="utf-8", errors="surrogatepass")
            report = suite_import(str(dataset), "--into", str(root / "suite"))
            if report is not None:
                for error in report["errors"]:
                    assert single_line(error["error"]), error
                with SuiteStore.open(root / "suite") as store:
                    assert store.verify() == []
        finally:
            shutil.rmtree(root)

    check()


# -- a suite folder with junk in it ---------------------------------------------------------------------
def test_opening_a_suite_with_junk_folders(fuzz: Fuzz, tmp_path: Path) -> None:
    """A suite whose index is gone is rebuilt from its folders: unreadable ones go to quarantine."""
    @fuzz.given(st.lists(task_trees(), min_size=1, max_size=3), st.one_of(st.just(""), task_toml_text))
    def check(trees: list[list[Any]], manifest: str) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            suite = root / "suite"
            write_task(GOOD[0], suite / "tasks" / "good")
            for i, tree in enumerate(trees):
                materialise(tree, root / f"bad{i}")
                os.rename(root / f"bad{i}" / "task", suite / "tasks" / f"bad{i}")
            (suite / "dataset.toml").write_text(manifest, encoding="utf-8", errors="surrogatepass")
            try:
                store = SuiteStore.open(suite)
            except Exception as exc:
                one_line_error(exc, SuiteError)
                return
            with store:
                assert GOOD[0].name in store
                store.stats()
                assert store.verify() == []
        finally:
            shutil.rmtree(root)

    check()


# -- a domain's import: names that walk out of --out ------------------------------------------------------------
def test_domain_import_stays_in_its_folder(fuzz: Fuzz, tmp_path: Path) -> None:
    # Names as formats hand them over: any Unicode text (a lone surrogate is refused while reading).
    names = st.one_of(nasty_strings, words, any_text).filter(lambda name: name.encode("utf-8", "ignore").decode() == name)

    @fuzz.given(st.lists(names, min_size=1, max_size=4))
    def check(names: list[str]) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            sentinel = root / "task.toml"  # beside --out: what a name like ".." would reach
            sentinel.write_text("keep me")
            items: list[tuple[str, Task | TaskFormatError]] = [
                (f"item {i}", GOOD[0].renamed(name)) for i, name in enumerate(names)]
            try:
                rows = import_tasks(items, root / "out", check=False)
            except Exception as exc:
                one_line_error(exc)
                rows = []
            for row in rows:
                assert single_line(row["reason"])
            assert sorted(p.name for p in root.iterdir()) == ["out", "task.toml"]
            assert sentinel.read_text() == "keep me"
        finally:
            shutil.rmtree(root)

    check()

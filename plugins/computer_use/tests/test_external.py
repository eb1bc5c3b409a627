"""External web-task collections (external.py): reading and checking a collection, the error for each
broken file or field, the conversion (nothing of the reference or the load script reaches the image),
the verifier's runner, and a real import with admission on the fixture collection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cu_helpers import bwrap

from autoenvscaling_computer_use import external
from autoenvscaling_computer_use.external import CollectionError, WebCollectionFormat

FIXTURE = Path(__file__).parent / "fixtures" / "webcollection"
GOOD = ["add-dry-cleaning", "complete-plumber", "rename-passport", "delete-milk"]
BAD = {"add-second-milk": "verify() passes with no action (the nop agent scored 1)",
       "delete-dentist": "the reference end state does not pass verify()"}


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dest = tmp_path / "webcollection"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def tasks_of(path: Path = FIXTURE) -> dict:
    _, items = external.convert(path)
    return dict(items)


def test_reads_the_fixture_collection():
    c = external.read_collection(FIXTURE)
    assert (c.name, c.start, c.port, c.ready_path, c.load) == ("tiny-todos", "python3 server.py", 8000, "/api/todos",
                                                               "load_reference.py")
    assert c.url == "http://127.0.0.1:8000/"
    entries = dict(external.read_entries(c))
    assert list(entries) == GOOD + list(BAD)
    e = entries["rename-passport"]
    assert (e.verify_file, e.function, e.reference, e.difficulty, e.tags) == (
        "verifiers.py", "renamed_passport", "reference/rename-passport.json", "medium", ("edit",))
    assert entries["add-second-milk"].difficulty == "medium"  # the default


def test_each_task_becomes_a_browser_task_of_the_computer_use_domain():
    tasks = tasks_of()
    assert sorted(t.name for t in tasks.values()) == sorted(f"autoenvscaling/tiny-todos-{i}" for i in GOOD + list(BAD))
    t = tasks["complete-plumber"]
    cfg = t.config
    assert cfg.environment.model_dump().get("browser") is True and cfg.agent.model_dump().get("tools") == ["browser"]
    prov = t.provenance
    assert (prov.domain, prov.family, prov.difficulty) == ("computer_use", "external:tiny-todos", "easy")
    assert prov.parameters["verify"] == "verifiers.py:completed_plumber"
    assert t.instruction.startswith('I called the plumber: mark the todo "Call the plumber" as done.')
    assert "http://127.0.0.1:8000/" in t.instruction
    # tests/: the collection's verifier file, the runner, which function on which URL
    assert t.files["tests/verifiers.py"].data == (FIXTURE / "verifiers.py").read_bytes()
    assert json.loads(t.files["tests/verify.json"].text) == {"file": "verifiers.py", "function": "completed_plumber",
                                                             "url": "http://127.0.0.1:8000/"}
    assert "/logs/verifier" in t.files["tests/test.sh"].text + t.files["tests/run_verify.py"].text
    assert "python3 -I -B /tests/run_verify.py" in t.files["tests/test.sh"].text
    # the verifier sees the pristine image plus where the app keeps its data (the default: its folder)
    assert cfg.verifier.outputs == ["/opt/aes-app"] and cfg.verifier.effective_view == "outputs"
    # solution/: the reference, the load script, solve.sh running one on the other
    assert t.files["solution/reference.json"].data == (FIXTURE / "reference/complete-plumber.json").read_bytes()
    assert t.files["solution/load_reference.py"].data == (FIXTURE / "load_reference.py").read_bytes()
    assert "python3 /solution/load_reference.py /solution/reference.json" in t.files["solution/solve.sh"].text
    assert t.files["solution/solve.sh"].executable
    # environment/: the domain's image, the app, the entrypoint
    env = t.environment_files
    assert env["app/server.py"].data == (FIXTURE / "app/server.py").read_bytes()
    assert {"aes/browser.py", "aes/aes-browser", "aes/webapp.py"} <= set(env)
    docker = env["Dockerfile"].text
    assert "chromium" in docker and "COPY app/ /opt/aes-app/" in docker
    assert docker.rstrip().endswith('ENTRYPOINT ["/opt/aes-external/entrypoint.sh"]')
    entry = env["aes-external/entrypoint.sh"].text
    assert "cd /opt/aes-app && PORT=8000 exec sh -c 'python3 server.py'" in entry
    assert "HOME=/tmp/aes-browser python3 /opt/aes/browser.py serve" in entry
    assert "http://127.0.0.1:8000/api/todos" in entry and entry.rstrip().endswith('exec "$@"')


def test_nothing_of_the_reference_or_the_load_script_is_in_the_image():
    secrets = [(FIXTURE / "load_reference.py").read_bytes()] + [p.read_bytes() for p in (FIXTURE / "reference").iterdir()]
    for task in tasks_of().values():
        env = task.environment_files
        assert not any(f.data in secrets for f in env.values())
        assert not [p for p in env if "reference" in p or p.startswith(("solution", "tests"))]
        docker = env["Dockerfile"].text
        assert "reference" not in docker and "solution" not in docker and ".." not in docker
        assert not any(b"load_reference" in f.data or b"/solution" in f.data for f in env.values())


def test_imported_tasks_pass_the_core_lint():
    from autoenvscaling.gates.lint import lint_task

    for task in tasks_of().values():
        assert lint_task(task, backend="bwrap") == []


def _toml(path: Path, text: str) -> None:
    (path / "collection.toml").write_text(text)


COLLECTION_ERRORS = [
    (lambda c: (c / "collection.toml").unlink(), "no collection.toml"),
    (lambda c: _toml(c, "name = \n"), "collection.toml: not valid TOML"),
    (lambda c: _toml(c, 'name = "Tiny Todos"\n'), "collection.toml: name must be"),
    (lambda c: _toml(c, 'name = "t"\n[reference]\nload = "load_reference.py"\n'), "collection.toml: missing [app] table"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nport = 80\n[reference]\nload = "load_reference.py"\n'),
     "collection.toml: [app] start must be"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\nport = "8000"\n[reference]\nload = "load_reference.py"\n'),
     "collection.toml: [app] port must be an integer"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\nready_path = "health"\n[reference]\nload = "load_reference.py"\n'),
     "collection.toml: [app] ready_path must be"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\n'), "collection.toml: missing [reference] table"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\n[reference]\nload = "app/server.py"\n'),
     "collection.toml: [reference] load: 'app/server.py' is in app/"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\n[reference]\nload = "nope.py"\n'),
     "collection.toml: [reference] load: 'nope.py' does not exist"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\n[reference]\nload = "../x.py"\n'),
     "must be a path inside the collection"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\n[reference]\nload = "tasks.jsonl"\n'),
     "collection.toml: [reference] load must be a .py or .sh script"),
    (lambda c: _toml(c, 'name = "t"\n[app]\nstart = "x"\ndata = ["data.json"]\n[reference]\nload = "load_reference.py"\n'),
     "[app] data must be a list of absolute paths"),
    (lambda c: shutil.rmtree(c / "app"), "app/: missing or empty"),
    (lambda c: (c / "tasks.jsonl").unlink(), "no tasks.jsonl"),
]


@pytest.mark.parametrize("breaks,message", COLLECTION_ERRORS, ids=[m for _, m in COLLECTION_ERRORS])
def test_a_broken_collection_file_is_one_line_naming_the_file_and_field(copy: Path, breaks, message: str):
    breaks(copy)
    with pytest.raises(CollectionError) as info:
        external.convert(copy)
    assert message in info.value.message and "\n" not in info.value.message
    assert info.value.hint


def _line(**changes) -> str:
    row = {"id": "x", "goal": "Do it.", "verify": "verifiers.py:deleted_milk", "reference": "reference/delete-milk.json"}
    row.update(changes)
    return json.dumps({k: v for k, v in row.items() if v is not None})


LINE_ERRORS = [
    ("{not json", "line 7: not valid JSON"),
    ("[1, 2]", "line 7: not a JSON object"),
    (_line(id="a b"), 'line 7: "id" must be'),
    (_line(goal=" "), 'line 7 (x): "goal" must be a non-empty string'),
    (_line(verify="verifiers.deleted_milk"), 'line 7 (x): "verify" must be "FILE.py:function"'),
    (_line(verify="verifiers.py:no_such"), "line 7 (x): \"verify\": verifiers.py defines no function 'no_such'"),
    (_line(verify="missing.py:f"), "line 7 (x): \"verify\": 'missing.py' does not exist"),
    (_line(verify="app/server.py:load"), "is in app/"),
    (_line(reference="reference/none.json"), "line 7 (x): \"reference\": 'reference/none.json' does not exist"),
    (_line(reference="app/data.json"), "line 7 (x): \"reference\": 'app/data.json' is in app/"),
    (_line(reference="load_reference.py"), 'line 7 (x): "reference" must name a .json file'),
    (_line(difficulty="extreme"), 'line 7 (x): "difficulty" must be one of easy, medium, hard'),
    (_line(tags="add"), 'line 7 (x): "tags" must be a list of strings'),
    (_line(solution="x"), "line 7 (x): unknown field 'solution'"),
    (_line(id="delete-milk"), "line 7: id 'delete-milk' repeats line 4"),
]


@pytest.mark.parametrize("line,message", LINE_ERRORS, ids=[m for _, m in LINE_ERRORS])
def test_a_broken_task_line_is_reported_and_the_others_still_convert(copy: Path, line: str, message: str):
    with (copy / "tasks.jsonl").open("a") as fh:
        fh.write(line + "\n")
    _, items = external.convert(copy)
    errors = [v for _, v in items if isinstance(v, CollectionError)]
    assert len(errors) == 1 and message in errors[0].message and errors[0].message.startswith("tasks.jsonl line 7")
    assert errors[0].hint
    assert sum(not isinstance(v, CollectionError) for _, v in items) == 6


def test_a_bad_reference_file(copy: Path):
    (copy / "reference/delete-milk.json").write_text("{oops")
    items = tasks_of(copy)
    assert items["delete-milk"].message.startswith(
        'tasks.jsonl line 4 (delete-milk): "reference": reference/delete-milk.json is not valid JSON')
    assert sum(isinstance(v, CollectionError) for v in items.values()) == 1


def test_a_verifier_file_that_does_not_parse(copy: Path):
    (copy / "verifiers.py").write_text("def ok(:\n")
    items = tasks_of(copy)
    assert all(isinstance(v, CollectionError) for v in items.values())
    assert items["add-dry-cleaning"].message.startswith(
        'tasks.jsonl line 1 (add-dry-cleaning): "verify": verifiers.py is not valid Python: invalid syntax')


def test_the_format_reads_scans_and_counts(copy: Path):
    fmt = WebCollectionFormat()
    assert fmt.detect(FIXTURE) and not fmt.detect(FIXTURE / "app")
    assert fmt.count(FIXTURE) == 6 and not fmt.can_export
    assert [t.name for t in fmt.read(FIXTURE)][:2] == ["autoenvscaling/tiny-todos-add-dry-cleaning", "autoenvscaling/tiny-todos-complete-plumber"]
    with (copy / "tasks.jsonl").open("a") as fh:
        fh.write("{broken\n")
    scanned = list(fmt.scan(copy))
    assert len(scanned) == 7 and isinstance(scanned[-1], CollectionError)
    assert scanned[-1].message.startswith("webcollection/tasks.jsonl line 7: not valid JSON")
    with pytest.raises(CollectionError):
        list(fmt.read(copy))


def _run_verify(tmp_path: Path, body: str) -> tuple[str, str]:
    """Run tests/run_verify.py's main() on a verifier with ``body``; (reward written, printed)."""
    import contextlib
    import io

    from autoenvscaling.api import verifier_library

    (tmp_path / "v.py").write_text(body)
    (tmp_path / "verify.json").write_text(json.dumps({"file": "v.py", "function": "check", "url": "http://x/"}))
    for name, text in verifier_library().items():  # tests/aes_verifier.py, beside run_verify.py
        (tmp_path / name).write_text(text)
    namespace = {"__name__": "runner", "__file__": str(tmp_path / "run_verify.py")}
    exec(compile(external.runner_script(), "run_verify.py", "exec"), namespace)
    namespace["REWARD_DIR"] = str(tmp_path / "logs")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        namespace["main"]()
    return (tmp_path / "logs" / "reward.txt").read_text().strip(), out.getvalue()


@pytest.mark.parametrize("returns,reward", [("True", "1"), ("False", "0"), ("0.25", "0.25"), ("7", "1"), ("-2.5", "0")])
def test_the_runner_turns_what_verify_returns_into_a_reward(tmp_path: Path, returns: str, reward: str):
    written, printed = _run_verify(tmp_path, f"def check(url):\n    assert url == 'http://x/'\n    return {returns}\n")
    assert written == reward
    assert printed.startswith(f"{'PASS' if reward == '1' else 'FAIL'} v.py:check('http://x/') returned {returns}: reward {reward}")


@pytest.mark.parametrize("returns", ["float('nan')", "'yes'", "None"])
def test_the_runner_scores_zero_what_is_not_a_bool_or_a_number(tmp_path: Path, returns: str):
    written, printed = _run_verify(tmp_path, f"def check(url):\n    return {returns}\n")
    assert written == "0"
    assert "return a bool or a number" in printed and printed.rstrip().endswith("raised: reward 0")


def test_the_runner_scores_an_exception_zero_and_prints_its_traceback(tmp_path: Path):
    written, printed = _run_verify(tmp_path, "def check(url):\n    raise ConnectionError('app down')\n")
    assert written == "0"
    assert "Traceback" in printed and "ConnectionError: app down" in printed and "FAIL v.py:check('http://x/') raised" in printed


def test_import_without_check_writes_every_readable_task_and_a_report(copy: Path, tmp_path: Path):
    with (copy / "tasks.jsonl").open("a") as fh:
        fh.write(_line(id="bad", verify="verifiers.py:nothing") + "\n")
    out = tmp_path / "out"
    seen = []
    rows = external.import_collection(copy, out, check=False, progress=seen.append)
    assert [r["status"] for r in rows] == ["written"] * 6 + ["rejected"]
    assert rows[-1]["id"] == "bad" and "defines no function 'nothing'" in rows[-1]["reason"]
    assert len(seen) == 7
    assert sorted(p.name for p in out.iterdir()) == sorted([f"tiny-todos-{i}" for i in GOOD + list(BAD)] + ["import-report.json"])
    report = json.loads((out / "import-report.json").read_text())
    assert report["collection"] == "tiny-todos" and not report["checked"] and report["tasks"] == rows
    assert (out / "tiny-todos-delete-milk" / "solution" / "solve.sh").stat().st_mode & 0o111


@bwrap
def test_import_with_check_admits_the_good_tasks_and_rejects_the_bad_ones(tmp_path: Path):
    """The real thing on bwrap (about 20 s with the domain's image built): the four good tasks pass the
    lint, build, oracle and null gates; the weak verifier and the wrong reference are rejected."""
    out = tmp_path / "out"
    rows = external.import_collection(FIXTURE, out, check=True, backend="bwrap")
    status = {r["id"]: (r["status"], r["reason"]) for r in rows}
    assert {i: s for i, (s, _) in status.items() if i in GOOD} == dict.fromkeys(GOOD, "admitted"), status
    assert {i: status[i] for i in BAD} == {i: ("rejected", reason) for i, reason in BAD.items()}
    assert sorted(p.name for p in out.iterdir()) == sorted([f"tiny-todos-{i}" for i in GOOD] + ["import-report.json"])
    report = json.loads((out / "import-report.json").read_text())
    assert report["checked"] and report["gates"] == ["lint", "build", "oracle", "null"]
    assert report["counts"] == {"admitted": 4, "rejected": 2}
    assert [r["id"] for r in report["tasks"]] == GOOD + list(BAD)

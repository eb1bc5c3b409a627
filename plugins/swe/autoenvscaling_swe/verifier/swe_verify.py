"""Run a repository's test suite the way an autoenvscaling-swe task is judged, and read the outcome of
every test from a report the tested code cannot rewrite. Standard library only: this file is copied
into every task's tests/ and runs with the image's python3 (``python3 -I``); the plugin imports the
same file to screen bugs, so generation and verification can never disagree on what passed.

The suite never runs in the agent's checkout. A scratch copy is assembled first:

1. copy the repository (without .git, byte-code and caches);
2. delete every test file, every pytest or packaging configuration file (conftest.py, pytest.ini,
   tox.ini, setup.cfg, pyproject.toml) and every interpreter start-up hook (sitecustomize.py,
   usercustomize.py, *.pth) from the copy: the agent may have edited, added or deleted any of them;
3. put the original tests and configuration back from the hidden bundle;
4. plant canaries: a few tests with names and outcomes drawn from os.urandom for this run only, some
   that must pass and some that must fail, among the real tests of the files that run.

The code under test runs inside pytest's process and can patch anything there, so the report is
guarded from outside that process:

- the tested process runs as another user (``nobody``) when the verifier is root: it cannot write
  the reward directory, read the hidden tests and test lists (their directory is made private first),
  write the scratch copy, or signal or trace the verifier;
- the verifier's own pytest plugin (``Recorder``, this file imported under another name before the
  repository joins ``sys.path``) writes each test's outcome, as it happens, as a line into a pipe whose
  other end only the verifier holds; nothing can be taken back once written, and a test reported
  twice keeps its worse outcome (an after-the-fact rewrite, like an ``atexit`` hook editing a JUnit
  file, has nothing to edit);
- the canaries must come out as drawn, the session must reach its end, and pytest's exit status must
  be 1 (a must-fail canary always fails): forging every outcome to "passed", skipping everything,
  exiting early with status 0, or deleting the report all break one of them, and then the run is not
  trusted and scores 0;
- when the run ends, every process the tested code left behind is killed before the verifier reads
  the pipe to its end or writes anything.

Third-party pytest plugins are not auto-loaded (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1); a repository that
needs one names it in ``pytest_plugins``.

Modes:
  verify  --spec /tests/swe.json       the task's verifier: writes /logs/verifier/reward.json (1 when
                                       every FAIL_TO_PASS and PASS_TO_PASS test passes and the run is
                                       trusted, else 0) and tests.json (0/1 per listed test)
  report  --workdir D --bundle B --out F   every test's outcome as JSON (used to screen bugs)
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TEST_DIRS = ("tests", "test")
CONFIG_NAMES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
STARTUP_NAMES = ("sitecustomize.py", "usercustomize.py")
SKIP_COPY = (".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", ".venv", ".eggs")
OUTCOMES = ("passed", "failed", "error", "skipped")
RANK = {o: i for i, o in enumerate(("passed", "skipped", "failed", "error"))}
_FRAME = re.compile(r"^(\S+\.py):(\d+): in (\S+)$")
MESSAGE_LINES = 8
TEXT_LIMIT = 20_000  # characters of a failure's text a report line carries
CHILD_UID = 65534  # nobody: the tested process's user when the verifier is root
RECORDER = "_aes_swe_report"  # the name this file is imported under inside the tested process
# pytest is imported before the repository joins sys.path (-P: the working directory is not on it),
# so a pytest.py or _pytest/ the agent left in the repository cannot stand in for the real one. The
# recorder comes from a private directory holding only it. argv: recorder dir, pipe fd, roots, args.
BOOT = ("import sys; import pytest; sys.path.insert(0, sys.argv[1]); import " + RECORDER + " as r; "
        "sys.path[:0] = [p for p in sys.argv[3].split(':') if p]; "
        "sys.exit(pytest.main(sys.argv[4:], plugins=[r.Recorder(int(sys.argv[2]))]))")
SESSION_EXIT = 1  # pytest's status when tests failed: a must-fail canary always does


def is_test_path(rel: str) -> bool:
    """Whether a repository path belongs to the test suite (hidden bundle), not to the code under test."""
    parts = rel.split("/")
    name = parts[-1]
    return (any(p in TEST_DIRS for p in parts[:-1]) or name == "conftest.py"
            or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))))


def is_config_path(rel: str) -> bool:
    """Files pytest or packaging read their configuration from (any depth for conftest.py)."""
    name = rel.split("/")[-1]
    return name == "conftest.py" or ("/" not in rel and name in CONFIG_NAMES)


def _removable(rel: str) -> bool:
    name = rel.split("/")[-1]
    return is_test_path(rel) or is_config_path(rel) or name in STARTUP_NAMES or name.endswith(".pth")


def assemble(workdir: Path, bundle: Path, dest: Path) -> None:
    """``dest``: the agent's repository with its tests and configuration replaced by the bundle's."""
    shutil.copytree(workdir, dest, symlinks=True, ignore=shutil.ignore_patterns(*SKIP_COPY, "*.pyc"))
    for root, dirs, files in os.walk(dest, topdown=True):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = Path(root, name)
            if _removable(path.relative_to(dest).as_posix()):
                path.unlink()
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
    for root, _dirs, files in os.walk(bundle):
        for name in files:
            src = Path(root, name)
            target = dest / src.relative_to(bundle)
            if target.is_symlink() or (target.exists() and not target.is_dir()):
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)


# -- the recorder: runs inside the tested process --------------------------------------------------
class Recorder:
    """The verifier's pytest plugin: one JSON line per report, written to ``fd`` as it happens."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def _send(self, record: dict) -> None:
        data = (json.dumps(record) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            pass

    def pytest_sessionstart(self, session) -> None:
        self._send({"k": "start"})

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self._send({"k": "collect", "nodeid": report.nodeid, "text": report.longreprtext[-TEXT_LIMIT:]})

    def pytest_runtest_logreport(self, report) -> None:
        record = {"k": "test", "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome}
        if report.failed:
            record["text"] = report.longreprtext[-TEXT_LIMIT:]
        self._send(record)

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        self._send({"k": "end", "exitstatus": int(exitstatus)})


def read_records(lines: list[str]) -> dict:
    """Per-test outcomes from the recorder's lines (a test reported more than once keeps its worst
    outcome; "passed" counts only from the call phase), the files whose collection failed, and
    whether the session started and ended."""
    tests: dict[str, dict] = {}
    collection: list[str] = []
    started = ended = False
    for line in lines:
        try:
            record = json.loads(line)
            kind = record["k"]
        except (ValueError, KeyError, TypeError):
            continue
        if kind == "start":
            started = True
        elif kind == "end":
            ended = True
        elif kind == "collect":
            collection.append(str(record.get("nodeid") or ""))
        elif kind == "test":
            outcome, when = record.get("outcome"), record.get("when")
            if outcome == "failed":
                outcome = "failed" if when == "call" else "error"
            elif outcome not in ("passed", "skipped") or (outcome == "passed" and when != "call"):
                continue  # a passing setup or teardown says nothing; "rerun" is not final
            nodeid = str(record.get("nodeid"))
            entry = {"outcome": outcome}
            if outcome in ("failed", "error"):
                entry.update(failure_details(str(record.get("text") or "")))
            if nodeid not in tests or RANK[outcome] > RANK[tests[nodeid]["outcome"]]:
                tests[nodeid] = entry
    return {"tests": tests, "collection_errors": sorted(set(collection)), "started": started, "ended": ended}


def failure_details(text: str) -> dict:
    """The assertion lines (``E ...``) and the frames of a failure's --tb=short text."""
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    frames = [{"path": m.group(1), "line": int(m.group(2)), "function": m.group(3)}
              for m in (_FRAME.match(line.strip()) for line in text.splitlines()) if m]
    return {"message": "\n".join(lines[:MESSAGE_LINES]) or text.strip()[-500:], "frames": frames}


# -- canaries ---------------------------------------------------------------------------------------
WORDS = ("alpha", "amber", "basil", "cedar", "delta", "ember", "fable", "gamma", "harbor", "ivory", "juniper",
         "kernel", "lumen", "maple", "nectar", "onyx", "pepper", "quartz", "raven", "sable", "tundra", "umber",
         "velvet", "willow", "yarrow", "zephyr")


def _canary_body(style: str, ok: bool, rng: random.Random) -> str:
    """One statement of a canary of ``style`` that passes when ``ok``, else fails."""
    n, word = rng.randrange(7, 60), rng.choice(WORDS)
    if style == "assert":
        total = n * (n - 1) // 2
        return f"assert sum(range({n})) == {total if ok else total + rng.randrange(1, 9)}"
    if style == "text":
        other = word if ok else word[:-1] + chr((ord(word[-1]) - 96) % 26 + 97)
        return f"assert {word!r}.upper().lower() == {other!r}"
    if style == "raises":
        return f"with __import__('pytest').raises(ValueError):\n    int({(word if ok else str(n))!r})"
    if style == "approx":
        return f"assert {n} / 4 == __import__('pytest').approx({n / 4 if ok else n / 4 + 1})"
    return "self." + UNITTEST_CHECKS[style](ok, n, word)


# A must-fail canary for each unittest assertion the test files call: patching one of them to do
# nothing makes its canary pass.
UNITTEST_CHECKS = {
    "assertEqual": lambda ok, n, w: f"assertEqual(len({w!r}), {len(w) + (0 if ok else 1)})",
    "assertNotEqual": lambda ok, n, w: f"assertNotEqual({n}, {n + 1 if ok else n})",
    "assertTrue": lambda ok, n, w: f"assertTrue({n} > {n - 1 if ok else n})",
    "assertFalse": lambda ok, n, w: f"assertFalse({n} < {n - 1 if ok else n + 1})",
    "assertIn": lambda ok, n, w: f"assertIn({n if ok else n + 100}, range({n + 1}))",
    "assertNotIn": lambda ok, n, w: f"assertNotIn({n + 100 if ok else n}, range({n + 1}))",
    "assertIs": lambda ok, n, w: f"assertIs({w!r}.isalpha(), {ok})",
    "assertIsNone": lambda ok, n, w: f"assertIsNone({None if ok else n})",
    "assertIsNotNone": lambda ok, n, w: f"assertIsNotNone({n if ok else None})",
    "assertIsInstance": lambda ok, n, w: f"assertIsInstance({w!r}, {'str' if ok else 'int'})",
    "assertRaises": lambda ok, n, w: f"assertRaises(ValueError, int, {(w if ok else str(n))!r})",
    "assertAlmostEqual": lambda ok, n, w: f"assertAlmostEqual({n} / 3, {n / 3 if ok else n / 3 + 1})",
    "assertGreater": lambda ok, n, w: f"assertGreater({n}, {n - 1 if ok else n + 1})",
    "assertGreaterEqual": lambda ok, n, w: f"assertGreaterEqual({n}, {n if ok else n + 1})",
    "assertLess": lambda ok, n, w: f"assertLess({n}, {n + 1 if ok else n - 1})",
    "assertLessEqual": lambda ok, n, w: f"assertLessEqual({n}, {n if ok else n - 1})",
    "assertListEqual": lambda ok, n, w: f"assertListEqual(list({w!r}), {list(w) if ok else list(w[::-1])})",
    "assertSequenceEqual": lambda ok, n, w: f"assertSequenceEqual({w!r}, {(w if ok else w + 'x')!r})",
    "assertTupleEqual": lambda ok, n, w: f"assertTupleEqual(tuple(range(3)), {(0, 1, 2) if ok else (0, 1, 3)})",
    "assertCountEqual": lambda ok, n, w: f"assertCountEqual({w!r}, {(w[::-1] if ok else w + 'q')!r})",
    "assertDictEqual": lambda ok, n, w: f"assertDictEqual({{{w!r}: {n}}}, {{{w!r}: {n if ok else n + 1}}})",
    "assertSetEqual": lambda ok, n, w: f"assertSetEqual(set({w!r}), {set(w) if ok else set(w) | {'#'}})",
    "assertRegex": lambda ok, n, w: f"assertRegex({w!r}, {('^' + w[:3] if ok else '^' + w[:3] + '#')!r})",
}
_ASSERT_CALL = re.compile(r"\.(assert[A-Z]\w*)\(")


def _styles(text: str) -> list[str]:
    """The must-fail canary styles the test files call for: ``pytest.raises``, ``approx`` and each
    unittest assertion they use (assertEqual at least, when they use unittest at all)."""
    styles = [s for s, marker in (("raises", "raises("), ("approx", "approx(")) if marker in text]
    methods = {m for m in _ASSERT_CALL.findall(text) if m in UNITTEST_CHECKS}
    if methods or "unittest" in text or "TestCase" in text:
        styles += sorted(methods | {"assertEqual"})
    return styles


def _names(source: str) -> tuple[set[str], list[str]]:
    """Every name defined in a test module, and the words its test names are made of."""
    words: list[str] = []
    names: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return names, words
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if node.name.startswith("test_"):
                words += [w for w in node.name[5:].split("_") if w.isalpha() and len(w) > 1]
    return names, words


def plant_canaries(repo: Path, files: list[str], rng: random.Random) -> tuple[list[dict], dict[str, list]]:
    """Insert canary tests between the top-level statements of ``files`` (paths in ``repo``): plain
    asserts, at least one that must pass and one that must fail, and a must-fail one in each style the
    files use (``pytest.raises``, ``approx``, each unittest assertion). Returns ``{"file", "name",
    "expect"}`` for each, and per file the (first line, line count) of every inserted block (to map
    reported lines back)."""
    sources = {f: (repo / f).read_text(encoding="utf-8", errors="replace") for f in files if (repo / f).is_file()}
    if not sources:
        return [], {}
    base = ["assert", "text", rng.choice(("assert", "text"))]
    expects = [rng.random() < 0.5 for _ in base]
    first, second = rng.sample(range(len(base)), 2)
    expects[first], expects[second] = True, False
    drawn = list(zip(base, expects)) + [(style, False) for style in _styles("\n".join(sources.values()))]
    rng.shuffle(drawn)
    canaries: list[dict] = []
    functions: dict[str, list[list[str]]] = {f: [] for f in sources}
    methods: dict[str, list[tuple[str, list[str], bool]]] = {f: [] for f in sources}
    taken = {f: _names(s)[0] for f, s in sources.items()}
    for style, ok in drawn:
        file = rng.choice(sorted(sources))
        name = _fresh_name(sources[file], taken[file], rng)
        body = [line for statement in (_canary_body(style, ok, rng),) for line in statement.splitlines()]
        if style in UNITTEST_CHECKS:
            methods[file].append((name, body, ok))
        else:
            functions[file].append([f"def {name}():", *("    " + b for b in body)])
            canaries.append({"file": file, "name": name, "expect": "passed" if ok else "failed"})
    for file, tests in methods.items():
        if tests:
            cls = "Test" + "".join(w.capitalize() for w in _fresh_name(sources[file], taken[file], rng)[5:].split("_"))
            lines = ["import unittest", "", "", f"class {cls}(unittest.TestCase):"]
            for name, body, ok in tests:
                lines += [f"    def {name}(self):", *("        " + b for b in body), ""]
                canaries.append({"file": file, "name": f"{cls}::{name}", "expect": "passed" if ok else "failed"})
            functions[file].append(lines)
    shifts = {}
    for file, blocks in functions.items():
        if blocks:
            text, shifts[file] = _insert_blocks(sources[file], blocks, rng)
            (repo / file).write_text(text, encoding="utf-8")
    return canaries, shifts


def _fresh_name(source: str, taken: set[str], rng: random.Random) -> str:
    """A test name made of the words of the file's own test names, not yet defined in it."""
    words = sorted(set(_names(source)[1])) or list(WORDS)
    while True:
        stem = "_".join(rng.sample(words, min(len(words), rng.choice((2, 3)))) + [rng.choice(WORDS)])
        if f"test_{stem}" not in taken and "Test" + stem.title().replace("_", "") not in taken:
            taken.add(f"test_{stem}")
            return f"test_{stem}"


def _insert_blocks(source: str, blocks: list[list[str]], rng: random.Random) -> tuple[str, list[tuple[int, int]]]:
    """``source`` with each block put after a random top-level definition (or at the end), and where
    the inserted lines are: (first line number in the new text, count)."""
    lines = source.splitlines()
    try:
        ends = [n.end_lineno for n in ast.parse(source).body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.end_lineno]
    except SyntaxError:
        ends = []
    at: dict[int, list[str]] = {}
    for block in blocks:
        at.setdefault(rng.choice(ends + [len(lines)]), []).extend(["", "", *block, ""])
    out: list[str] = []
    spans = []
    for number, line in enumerate(lines, 1):
        out.append(line)
        block = at.pop(number, [])
        if block:
            spans.append((len(out) + 1, len(block)))
            out.extend(block)
    for rest in at.values():
        spans.append((len(out) + 1, len(rest)))
        out.extend(rest)
    return "\n".join(out) + "\n", spans


def original_line(line: int, spans: list[tuple[int, int]]) -> int:
    """A line number of a file with canaries inserted, as it was before (``spans`` from _insert_blocks)."""
    return line - sum(count for first, count in spans if first + count <= line)


def _canary_targets(repo: Path, paths: list[str]) -> list[str]:
    """The files the canaries go into: among the files that run (``paths``), else the test module with
    the most tests (it is collected when the whole suite runs)."""
    files = sorted({p.split("::", 1)[0] for p in paths if p.split("::", 1)[0].endswith(".py")})
    if files:
        return files
    counts = {}
    for path in repo.rglob("*.py"):
        rel = path.relative_to(repo).as_posix()
        if is_test_path(rel) and (path.name.startswith("test_") or path.name.endswith("_test.py")):
            counts[rel] = path.read_text(encoding="utf-8", errors="replace").count("def test")
    best = sorted(counts, key=lambda r: (-counts[r], r))
    return best[:1] if best and counts[best[0]] else []


def integrity_problem(records: dict, canaries: list[dict], exit_code: int | None) -> str:
    """Why the run's report cannot be trusted ("" when it can)."""
    if not canaries:
        return "no canary could be planted: no test module of the run to put them in"
    if not records["started"]:
        return "the recorder saw no test session (the tested process ended before pytest started)"
    tests = records["tests"]
    for canary in canaries:
        tail = "::" + canary["name"]
        got = [v["outcome"] for t, v in tests.items() if t.endswith(tail)]
        outcome = got[0] if got else "not run"
        if outcome != canary["expect"]:
            return (f"canary {canary['file']}{tail} {outcome}, expected {canary['expect']}: the outcomes were "
                    "forged, or tests did not run as collected")
    if not records["ended"]:
        return "the test session never reached its end (the tested code ended the process?)"
    if exit_code != SESSION_EXIT:
        return f"pytest exited with status {exit_code}, not {SESSION_EXIT} (a must-fail canary ran)"
    return ""


# -- running the suite -------------------------------------------------------------------------------
def _sweep(uid: int, since: float) -> None:
    """Kill every process of ``uid`` that started at or after ``since`` (clock ticks since boot) until
    none is left: what the tested code left behind, setsid'd daemons included."""
    for _ in range(100):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                status = Path(f"/proc/{entry}/status").read_text()
                start = _start_ticks(entry)
            except (OSError, ValueError, IndexError):
                continue
            uids = re.search(r"^Uid:\s+(\d+)", status, re.M)
            if uids and int(uids.group(1)) == uid and start >= since:
                found = True
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        if not found:
            return
        time.sleep(0.02)


def _start_ticks(pid: str = "self") -> int:
    """When process ``pid`` started, in clock ticks since boot (/proc/PID/stat field 22): every process
    the tested code started is younger than the verifier."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def _open_up(root: Path, owner: int | None) -> None:
    """Make ``root`` readable, not writable, by the tested process: dirs 755, files 644 (755 when
    executable); ``home`` below it is the tested process's own."""
    for dirpath, dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755 if os.stat(path).st_mode & 0o111 else 0o644)
    home = root / "home"
    home.mkdir(exist_ok=True)
    if owner is not None:
        os.chown(home, owner, owner)
    os.chmod(home, 0o700)


def run_pytest(repo: Path, paths: list[str], *, timeout: float, plugins: list[str], child_uid: int | None = None,
               rng: random.Random | None = None) -> dict:
    """Run pytest in ``repo`` (an assembled scratch copy inside a directory of its own) with canaries
    planted and the recorder's pipe; ``child_uid``: the user the tested process runs as (None: this
    process's). ``{"tests": {nodeid: {"outcome", "message", "frames"}}, "collection_errors", "seconds",
    "timed_out", "exit_code", "integrity", "canaries", "output_tail"}``; canaries are not in ``tests``."""
    scratch = repo.parent
    canaries, shifts = plant_canaries(repo, _canary_targets(repo, paths), rng or random.SystemRandom())
    recorder = scratch / "recorder"
    recorder.mkdir(exist_ok=True)
    shutil.copyfile(__file__, recorder / f"{RECORDER}.py")
    _open_up(scratch, child_uid)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": os.environ.get("LANG", "C.UTF-8"),
           "HOME": str(scratch / "home"), "TMPDIR": tempfile.gettempdir(), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONHASHSEED": "0"}
    roots = [str(repo / "src")] if (repo / "src").is_dir() else []
    read_fd, write_fd = os.pipe()
    command = [sys.executable, "-B", "-s", "-P", "-c", BOOT, str(recorder), str(write_fd), ":".join([*roots, str(repo)]),
               "-p", "no:cacheprovider", "-q", "--tb=short", *(a for p in plugins for a in ("-p", p)), "--", *paths]
    chunks: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(read_fd, chunks), daemon=True)
    since = _start_ticks()
    start = time.monotonic()
    with tempfile.TemporaryFile() as output:
        try:
            proc = subprocess.Popen(command, cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                    stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(write_fd,),
                                    user=child_uid, group=child_uid, extra_groups=None if child_uid is None else [])
        finally:
            os.close(write_fd)
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        _end(proc, child_uid, since)
        seconds = time.monotonic() - start
        reader.join(timeout=10)  # EOF once every holder of the pipe's write end is gone
        held = reader.is_alive()
        output.seek(0)
        tail = output.read()[-3000:].decode("utf-8", "replace")
    records = read_records(b"".join(chunks).decode("utf-8", "replace").splitlines())
    problem = integrity_problem(records, canaries, proc.returncode)
    if held:
        problem = "a process the verifier could not end kept the report pipe open"
    canary_ids = {c["name"] for c in canaries}
    tests = {} if timed_out else {t: v for t, v in records["tests"].items() if t.split("::", 1)[-1] not in canary_ids}
    for entry in tests.values():
        for frame in entry.get("frames", []):
            if frame["path"] in shifts:
                frame["line"] = original_line(frame["line"], shifts[frame["path"]])
    return {"tests": tests, "collection_errors": [] if timed_out else records["collection_errors"],
            "seconds": round(seconds, 3), "timed_out": timed_out, "exit_code": proc.returncode,
            "integrity": "" if timed_out else problem, "canaries": len(canaries), "output_tail": tail}


def _drain(fd: int, chunks: list[bytes]) -> None:
    try:
        while True:
            data = os.read(fd, 65536)
            if not data:
                return
            chunks.append(data)
    finally:
        os.close(fd)


def _end(proc: subprocess.Popen, child_uid: int | None, since: float) -> None:
    """The tested process and everything it started are gone when this returns."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()
    if child_uid is not None:
        _sweep(child_uid, since)


def run_suite(workdir: Path, bundle: Path, paths: list[str], *, timeout: float, plugins: list[str],
              private: list[Path]) -> dict:
    """The suite of ``workdir`` with ``bundle``'s tests, isolated as far as this process's rights allow:
    as root, ``private`` directories are closed to the tested process, which runs as ``nobody``."""
    root = os.getuid() == 0
    if root:
        for path in private:
            os.chmod(path, 0o700)
    scratch = Path(tempfile.mkdtemp(prefix="aes-swe-"))
    try:
        assemble(workdir, bundle, scratch / "repo")
        return run_pytest(scratch / "repo", paths, timeout=timeout, plugins=plugins,
                          child_uid=CHILD_UID if root else None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def verify(spec_path: Path) -> int:
    # tests/aes_verifier.py, the verifier library beside this file, first on sys.path (-I leaves this
    # folder off it). Imported here alone: the tested process imports this file too, from a private
    # folder holding only it, and must never import anything from there.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import aes_verifier

    spec = json.loads(spec_path.read_text())
    logs = Path(spec.get("logs", "/logs/verifier"))
    logs.mkdir(parents=True, exist_ok=True)
    if os.getuid() == 0:
        os.chmod(logs, 0o755)  # the tested process (nobody) must not write here
    listed = list(spec["fail_to_pass"]) + list(spec["pass_to_pass"])
    bundle = spec_path.parent / spec.get("bundle", "repo")
    files = sorted({t.split("::", 1)[0] for t in listed})
    run = run_suite(Path(spec["workdir"]), bundle, files, timeout=float(spec.get("timeout_sec", 600)),
                    plugins=list(spec.get("pytest_plugins", [])), private=[spec_path.parent, bundle])
    results = {t: int(run["tests"].get(t, {}).get("outcome") == "passed") for t in listed}
    trusted = not run["integrity"] and not run["timed_out"]
    reward = int(bool(listed) and all(results.values()) and trusted)
    aes_verifier.clear(str(logs), ("reward.txt", "reward.json", "tests.json"))  # only this run's verdict counts
    aes_verifier.write_json("tests.json", results, str(logs), sort_keys=True)
    aes_verifier.write_reward(reward, str(logs), as_json=True)
    failed = [t for t, ok in results.items() if not ok]
    print(f"swe verifier: {len(listed) - len(failed)}/{len(listed)} listed tests passed in {run['seconds']:.1f}s"
          + (" (timed out)" if run["timed_out"] else "") + f"; reward {reward}")
    if run["integrity"]:
        print(f"  report not trusted: {run['integrity']}")
    for t in failed[:20]:
        print(f"  not passed: {t} ({run['tests'].get(t, {}).get('outcome', 'not run')})")
    if run["collection_errors"]:
        print("  collection errors: " + ", ".join(run["collection_errors"]))
    print(run["output_tail"][-1500:])
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--spec", type=Path, default=Path("/tests/swe.json"))
    r = sub.add_parser("report")
    r.add_argument("--workdir", type=Path, required=True)
    r.add_argument("--bundle", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--timeout", type=float, default=600.0)
    r.add_argument("--plugin", action="append", default=[])
    r.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)
    if args.mode == "verify":
        return verify(args.spec)
    run = run_suite(args.workdir, args.bundle, args.paths, timeout=args.timeout, plugins=args.plugin, private=[args.bundle])
    args.out.write_text(json.dumps(run))
    return 0


if __name__ == "__main__":
    sys.exit(main())

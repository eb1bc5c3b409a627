"""External web-task collections imported as Harbor tasks.

Browser-task collections are often a local web app started by a command, a ``verify(url)``
function per task that inspects the app's state over HTTP, and a reference end state (the state a
correct run leaves). A collection in this shape is imported with
``autoenvscaling computer-use import COLLECTION --out DIR`` (or ``suite import --format web-collection``):

    COLLECTION/collection.toml   the collection:
        name = "tiny-todos"                  # lowercase letters, digits, - and _; names the tasks
        [app]
        start = "python3 server.py"          # run with sh in the app's folder (/opt/aes-app), $PORT set;
                                             # it must serve HTTP on 127.0.0.1:PORT and keep running
        port = 8000                          # optional, default 8000
        ready_path = "/"                     # optional: the app is ready once GET ready_path answers
                                             # (any status below 500); it should within seconds (the
                                             # sandbox waits up to 20 s, the ENTRYPOINT gives up at 60 s)
        data = ["/opt/aes-app"]              # optional: where the running app keeps its state (absolute
                                             # paths; default its folder): the task's verifier outputs,
                                             # the only changes of the attempt its verifier sees
        [reference]
        load = "load_reference.py"           # a .py or .sh script in the collection (not in app/)
                                             # that puts a reference end state into the running app,
                                             # e.g. by writing the app's data file or POSTing to a
                                             # local-only admin path
    COLLECTION/app/...           the app's files, copied into the image at /opt/aes-app
    COLLECTION/tasks.jsonl       one task per line, a JSON object:
        {"id": "add-milk",                           # letters, digits, . _ -; unique
         "goal": "Add a todo ...",                   # what the agent is asked
         "verify": "verifiers.py:added_milk",        # FILE.py:function, FILE in the collection (not app/)
         "reference": "reference/add-milk.json",     # a JSON file in the collection (not app/)
         "difficulty": "easy", "tags": ["add"]}      # optional: easy | medium | hard; strings
    COLLECTION/verifiers.py      def function(url) -> bool | float, over the app's HTTP state: url is
                                 http://127.0.0.1:PORT/; True/False score 1/0, a number is clipped to
                                 [0, 1], an exception scores 0 (its traceback is printed)

Each task becomes a computer_use task (family ``external:<name>``): the domain's image (Debian's
Chromium, Playwright, the browser service) plus the app at /opt/aes-app (writable, so the app may keep
its data there); the ENTRYPOINT starts the app and the browser service and waits until the app
answers. The instruction is the goal and the app's address; the agent gets the browser tool. tests/
holds the verifier file and a runner that calls the task's function; solution/ holds the reference
JSON, the load script and solve.sh, which runs ``python3 LOAD /solution/reference.json`` (``bash`` for
a .sh) in /solution with AES_APP_URL (http://127.0.0.1:PORT/) and AES_APP_DIR (/opt/aes-app) set.
Neither the reference nor the load script is in the image (lint refuses a reference identical to a
file of app/). Verifiers and load scripts run with the image's Python 3.11 (standard library and
Playwright) and cannot import other files of the collection: keep each one file.

``import_collection(..., check=True)`` admits a task only if it passes the lint, build, oracle and
null gates, one sandbox at a time: the reference end state must pass verify() and doing nothing must
not. OUT/import-report.json lists every line of tasks.jsonl: id, task, status (admitted, rejected,
error; written without the check) and reason.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any, Callable, Iterator

from autoenvscaling.api import Task, TaskFile, TaskFormat, TaskFormatError, qualified_name, verifier_library

COLLECTION_TOML, TASKS_JSONL, APP_DIR = "collection.toml", "tasks.jsonl", "app"
APP_HOME = "/opt/aes-app"
FAMILY_PREFIX = "external:"
DIFFICULTIES = ("easy", "medium", "hard")
READY_TIMEOUT_SEC = 60
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_VERIFY = re.compile(r"^([^:]+\.py):([A-Za-z_][A-Za-z0-9_]*)$")
_TASK_KEYS = {"id", "goal", "verify", "reference", "difficulty", "tags"}
_SKIPPED = {"__pycache__", ".git", ".DS_Store"}
NOP_PASSES = "verify() passes with no action (the nop agent scored {reward})"
REFERENCE_FAILS = "the reference end state does not pass verify()"


class CollectionError(TaskFormatError):
    """A collection that cannot be imported: the message names the file and the field."""


@dataclasses.dataclass(frozen=True)
class Collection:
    root: Path
    name: str
    start: str
    port: int
    ready_path: str
    load: str  # the load script, relative to root
    data: tuple[str, ...] = (APP_HOME,)  # where the app keeps its state: the tasks' verifier outputs

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One line of tasks.jsonl, checked."""

    id: str
    goal: str
    verify_file: str
    function: str
    reference: str
    difficulty: str
    tags: tuple[str, ...]


# -- reading ---------------------------------------------------------------------------------------

def read_collection(path: str | Path) -> Collection:
    """collection.toml and the app folder, checked (CollectionError on the first problem)."""
    root = Path(path)
    toml_path = root / COLLECTION_TOML
    where = f"{root.name}/{COLLECTION_TOML}"
    if not toml_path.is_file():
        raise CollectionError(f"{root}: no {COLLECTION_TOML}",
                              hint="a collection folder holds collection.toml, app/ and tasks.jsonl")
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CollectionError(f"{where}: not valid TOML: {exc}", hint="fix the TOML syntax") from None
    name: Any = data.get("name")  # TOML values of any type until _require has checked them
    _require(isinstance(name, str) and _NAME.match(name),
             f"{where}: name must be lowercase letters, digits, - or _ (is {name!r})", 'e.g. name = "tiny-todos"')
    app = _table(data, "app", where, 'e.g. [app] start = "python3 server.py"')
    start: Any = app.get("start")
    _require(isinstance(start, str) and start.strip(), f"{where}: [app] start must be the command that serves the app",
             'e.g. start = "python3 server.py" (run in app/, with $PORT set)')
    port = app.get("port", 8000)
    _require(not isinstance(port, bool) and isinstance(port, int) and 1 <= port <= 65535,
             f"{where}: [app] port must be an integer 1-65535 (is {port!r})", "e.g. port = 8000")
    ready = app.get("ready_path", "/")
    _require(isinstance(ready, str) and ready.startswith("/") and not any(c.isspace() for c in ready),
             f"{where}: [app] ready_path must be a path starting with / (is {ready!r})",
             'e.g. ready_path = "/" or "/api/health"')
    state = app.get("data", [APP_HOME])
    _require(isinstance(state, list) and state
             and all(isinstance(p, str) and p.startswith("/") and ".." not in p.split("/") for p in state),
             f"{where}: [app] data must be a list of absolute paths (is {state!r})",
             f'where the app writes its state, e.g. data = ["{APP_HOME}/data.json"]')
    reference = _table(data, "reference", where, 'e.g. [reference] load = "load_reference.py"')
    load: Any = reference.get("load")
    _require(isinstance(load, str) and load.strip(),
             f"{where}: [reference] load must name the script that loads a reference state",
             'e.g. load = "load_reference.py" (it gets the JSON file\'s path)')
    load = _collection_file(root, load, f"{where}: [reference] load", hint="a .py or .sh script next to collection.toml")
    _require(load.endswith((".py", ".sh")), f"{where}: [reference] load must be a .py or .sh script (is {load!r})",
             "it runs as python3 SCRIPT FILE.json or bash SCRIPT FILE.json")
    _require((root / APP_DIR).is_dir() and app_files(root), f"{root.name}/{APP_DIR}/: missing or empty",
             "app/ holds the web app's files; [app] start runs there")
    return Collection(root=root, name=name, start=start.strip(), port=port, ready_path=ready, load=load,
                      data=tuple(dict.fromkeys(p.rstrip("/") or "/" for p in state)))


def _require(ok: object, message: str, hint: str) -> None:
    """Raise CollectionError(``message``, ``hint``) unless ``ok``."""
    if not ok:
        raise CollectionError(message, hint=hint)


def _table(data: dict[str, Any], key: str, where: str, hint: str) -> dict[str, Any]:
    table: Any = data.get(key)
    _require(isinstance(table, dict), f"{where}: missing [{key}] table", hint)
    return table


def _collection_file(root: Path, rel: str, where: str, *, hint: str) -> str:
    """``rel`` normalised, checked to be a file inside the collection and outside app/ (where the
    agent would find it)."""
    parts = Path(rel).parts
    _require(not Path(rel).is_absolute() and ".." not in parts,
             f"{where}: {rel!r} must be a path inside the collection", hint)
    _require(not parts or parts[0] != APP_DIR,
             f"{where}: {rel!r} is in app/, which is copied into the image the agent works in",
             "move it out of app/ (next to collection.toml)")
    _require((root / rel).is_file(), f"{where}: {rel!r} does not exist", hint)
    return Path(rel).as_posix()


def app_files(root: Path) -> dict[str, bytes]:
    """app/'s files (relative paths), without caches and VCS folders."""
    base = root / APP_DIR
    out = {}
    for p in sorted(base.rglob("*")):
        rel = p.relative_to(base)
        if p.is_file() and not _SKIPPED.intersection(rel.parts) and p.suffix != ".pyc":
            out[rel.as_posix()] = p.read_bytes()
    return out


def read_entries(collection: Collection) -> Iterator[tuple[str, Entry | CollectionError]]:
    """Each line of tasks.jsonl as (its id, or "line N" when it has none, and the Entry or the error
    that line has): one bad line never stops the others."""
    path = collection.root / TASKS_JSONL
    if not path.is_file():
        raise CollectionError(f"{collection.root.name}: no {TASKS_JSONL}",
                              hint="one JSON object per line: id, goal, verify, reference")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise CollectionError(f"{collection.root.name}/{TASKS_JSONL}: not UTF-8 text: {exc}", hint="save it as UTF-8") from None
    seen: dict[str, int] = {}
    functions: dict[str, set[str] | str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        label = _line_id(line) or f"line {number}"
        try:
            entry = _entry(collection, line, number, functions)
            if entry.id in seen:
                raise CollectionError(f"{TASKS_JSONL} line {number}: id {entry.id!r} repeats line {seen[entry.id]}",
                                      hint="every task needs its own id")
            seen[entry.id] = number
            yield label, entry
        except CollectionError as exc:
            yield label, exc


def _line_id(line: str) -> str | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    task_id = row.get("id") if isinstance(row, dict) else None
    return task_id if isinstance(task_id, str) and task_id.strip() else None


def _entry(collection: Collection, line: str, number: int, functions: dict[str, set[str] | str]) -> Entry:
    where = f"{TASKS_JSONL} line {number}"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CollectionError(f"{where}: not valid JSON: {exc.msg} (column {exc.colno})",
                              hint="one JSON object per line") from None
    _require(isinstance(row, dict), f"{where}: not a JSON object",
             '{"id": ..., "goal": ..., "verify": ..., "reference": ...}')
    task_id = row.get("id")
    _require(isinstance(task_id, str) and _ID.match(task_id),
             f"{where}: \"id\" must be letters, digits, '.', '_' or '-' (is {task_id!r})", 'e.g. "id": "add-milk"')
    where = f"{where} ({task_id})"
    unknown = sorted(set(row) - _TASK_KEYS)
    if unknown:
        raise CollectionError(f"{where}: unknown field {unknown[0]!r}", hint=f"fields: {', '.join(sorted(_TASK_KEYS))}")
    goal = row.get("goal")
    _require(isinstance(goal, str) and goal.strip(), f"{where}: \"goal\" must be a non-empty string",
             "what the agent is asked to do")
    verify = row.get("verify")
    m = _VERIFY.match(verify) if isinstance(verify, str) else None
    if m is None:
        raise CollectionError(f"{where}: \"verify\" must be \"FILE.py:function\" (is {verify!r})",
                              hint='e.g. "verifiers.py:added_milk"')
    verify_file = _collection_file(collection.root, m.group(1), f"{where}: \"verify\"",
                                   hint="the verifier file sits next to collection.toml")
    _require("/" not in verify_file, f"{where}: \"verify\" file {verify_file!r} must sit next to collection.toml",
             "it is copied to tests/ under its own name")
    defined = functions.get(verify_file)
    if defined is None:
        defined = functions[verify_file] = _functions(collection.root / verify_file)
    _require(not isinstance(defined, str), f"{where}: \"verify\": {verify_file} is not valid Python: {defined}",
             "the verifier file must import cleanly")
    _require(m.group(2) in defined, f"{where}: \"verify\": {verify_file} defines no function {m.group(2)!r}",
             f"defined: {', '.join(sorted(defined)) or 'none'}")
    reference = row.get("reference")
    _require(isinstance(reference, str) and reference.endswith(".json"),
             f"{where}: \"reference\" must name a .json file (is {reference!r})", 'e.g. "reference/add-milk.json"')
    reference = _collection_file(collection.root, reference, f"{where}: \"reference\"", hint="the reference end state, a JSON file")
    try:
        json.loads((collection.root / reference).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CollectionError(f"{where}: \"reference\": {reference} is not valid JSON: {exc}", hint="fix the JSON") from None
    difficulty = row.get("difficulty", "medium")
    _require(difficulty in DIFFICULTIES,
             f"{where}: \"difficulty\" must be one of {', '.join(DIFFICULTIES)} (is {difficulty!r})",
             "or leave it out (medium)")
    tags = row.get("tags", [])
    _require(isinstance(tags, list) and all(isinstance(t, str) and t.strip() for t in tags),
             f"{where}: \"tags\" must be a list of strings", 'e.g. "tags": ["add"]')
    return Entry(id=task_id, goal=goal.strip(), verify_file=verify_file, function=m.group(2), reference=reference,
                 difficulty=difficulty, tags=tuple(t.strip() for t in tags))


def _functions(path: Path) -> set[str] | str:
    """The top-level functions ``path`` defines, or why it cannot be read."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=path.name)
    except (SyntaxError, UnicodeDecodeError) as exc:
        return str(exc)
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


# -- conversion ------------------------------------------------------------------------------------

def task_name(collection: Collection, entry: Entry) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", f"{collection.name}-{entry.id}".lower()).strip("-")


def entrypoint(collection: Collection) -> str:
    """The image's first process: the app and the browser service in the background; once the app
    answers, the container's command. An app that exits first, or never answers, ends it with the tail
    of the app's log (the sandbox then reports its last line)."""
    url = f"http://127.0.0.1:{collection.port}{collection.ready_path}"
    wait = ("import sys, time, urllib.error, urllib.request\n"
            "url, limit, pid = sys.argv[1], float(sys.argv[2]), sys.argv[3]\n"
            "deadline = time.monotonic() + limit\n"
            "def alive():\n"
            "    try:\n"
            "        return open(f\"/proc/{pid}/stat\").read().rpartition(\")\")[2].split()[0] != \"Z\"\n"
            "    except OSError:\n"
            "        return False\n"
            "while time.monotonic() < deadline and alive():\n"
            "    try:\n"
            "        urllib.request.urlopen(url, timeout=2).close()\n"
            "        sys.exit(0)\n"
            "    except urllib.error.HTTPError as exc:\n"
            "        if exc.code < 500:\n"
            "            sys.exit(0)\n"
            "    except OSError:\n"
            "        pass\n"
            "    time.sleep(0.1)\n"
            "sys.exit(1 if alive() else 2)\n")
    start = shlex.quote(collection.start)
    return ("#!/bin/sh\n"
            f"# Start the {collection.name} app and the browser service, wait until the app answers, then run\n"
            "# the container's command.\n"
            "mkdir -p /var/log/aes /tmp/aes-browser\n"
            f"(cd {APP_HOME} && PORT={collection.port} exec sh -c {start}) >/var/log/aes/app.log 2>&1 &\n"
            "app=$!\n"
            "HOME=/tmp/aes-browser python3 /opt/aes/browser.py serve >/var/log/aes/browser.log 2>&1 &\n"
            f"python3 -c {shlex.quote(wait)} {shlex.quote(url)} {READY_TIMEOUT_SEC} \"$app\"\n"
            "case $? in\n"
            f"    1) why=\"did not answer GET {url} within {READY_TIMEOUT_SEC}s\" ;;\n"
            f"    2) why=\"exited before it answered GET {url}\" ;;\n"
            "    *) why=\"\" ;;\n"
            "esac\n"
            'if [ -n "$why" ]; then\n'
            "    tail -n 20 /var/log/aes/app.log\n"
            f"    echo \"the app ([app] start = {collection.start!r}) $why; its log is above\"\n"
            "    exit 1\n"
            "fi\n"
            "i=0\n"
            "while [ ! -S /run/aes-browser/browser.sock ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done\n"
            'exec "$@"\n')


def dockerfile(collection: Collection) -> str:
    from .render import PREAMBLE

    return (PREAMBLE + f"ENV AES_APP_URL={collection.url} AES_APP_DIR={APP_HOME} AES_PORT={collection.port}\n"
            f"COPY app/ {APP_HOME}/\n"
            "COPY aes-external/entrypoint.sh /opt/aes-external/entrypoint.sh\n"
            "RUN chmod 0755 /opt/aes-external/entrypoint.sh\n"
            "WORKDIR /root\n"
            'ENTRYPOINT ["/opt/aes-external/entrypoint.sh"]\n')


def runner_script() -> str:
    """tests/run_verify.py: call the task's verify function and write the reward."""
    return '''"""Score the attempt: call the collection's verify function on the app's URL (tests/verify.json
names it) and write /logs/verifier/reward.txt: True/False -> 1/0, a number clipped to [0, 1], an
exception -> 0 with its traceback."""

import importlib.util
import json
import math
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REWARD_DIR = "/logs/verifier"
# the verifier library beside this file (-I leaves this folder off sys.path), then the folder leaves
# again: the collection's file is loaded by its path and must not shadow any module by its name
sys.path.insert(0, HERE)
import aes_verifier  # noqa: E402
del sys.path[0]


def score(value):
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and math.isfinite(value):
        return min(1.0, max(0.0, float(value)))
    raise TypeError(f"verify() returned {value!r}: return a bool or a number")


def main():
    aes_verifier.clear(REWARD_DIR, ("reward.txt", "reward.json"))
    with open(os.path.join(HERE, "verify.json"), encoding="utf-8") as fh:
        spec = json.load(fh)
    call = f"{spec['file']}:{spec['function']}({spec['url']!r})"
    try:
        module_spec = importlib.util.spec_from_file_location("collection_verifiers", os.path.join(HERE, spec["file"]))
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        value = getattr(module, spec["function"])(spec["url"])
        reward = score(value)
        print(f"{'PASS' if reward >= 1 else 'FAIL'} {call} returned {value!r}: reward {reward:g}")
    except (Exception, SystemExit):
        traceback.print_exc()
        print(f"FAIL {call} raised: reward 0")
        reward = 0.0
    aes_verifier.write_reward(reward, REWARD_DIR, fmt="g")


if __name__ == "__main__":
    main()
    sys.exit(0)
'''


def to_task(collection: Collection, entry: Entry) -> Task:
    """The Harbor task for one entry (see the module docstring for the layout)."""
    from .render import DOMAIN, image_files

    root = collection.root
    name = qualified_name(task_name(collection, entry))
    load_name = Path(collection.load).name
    load_name = "load-solve.sh" if load_name == "solve.sh" else load_name  # solve.sh is ours
    interpreter = "python3" if load_name.endswith(".py") else "bash"
    files: dict[str, bytes | str | TaskFile] = {
        "environment/Dockerfile": dockerfile(collection),
        **image_files(),
        "environment/aes-external/entrypoint.sh": entrypoint(collection),
        **{f"environment/{APP_DIR}/{rel}": data for rel, data in app_files(root).items()},
        "tests/test.sh": "#!/bin/sh\n# Score the app's state with the collection's verify function: /logs/verifier/reward.txt.\n"
                         "mkdir -p /logs/verifier\nexec python3 -I -B /tests/run_verify.py\n",
        "tests/run_verify.py": runner_script(),
        f"tests/{entry.verify_file}": (root / entry.verify_file).read_bytes(),
        "tests/verify.json": json.dumps({"file": entry.verify_file, "function": entry.function, "url": collection.url},
                                        indent=1) + "\n",
        # run_verify.py's library, after the collection's file: never replaced by it
        **{f"tests/{n}": text for n, text in verifier_library().items()},
        "solution/solve.sh": ("#!/bin/bash\n# Reference solution: load the collection's reference end state into the running app.\n"
                              f"set -eu\ncd /solution\nexport AES_APP_URL={collection.url} AES_APP_DIR={APP_HOME}\n"
                              f"{interpreter} /solution/{shlex.quote(load_name)} /solution/reference.json\n"),
        "solution/reference.json": (root / entry.reference).read_bytes(),
        f"solution/{load_name}": (root / collection.load).read_bytes(),
    }
    tags = sorted({"external", collection.name, *entry.tags})
    instruction = f"{entry.goal}\n\nThe web app is at {collection.url} (open it in the browser).\n"
    about = f"{collection.name}: {entry.goal.splitlines()[0]}"
    config = {
        "schema_version": "1.1",
        "task": {"name": name, "description": about[:200], "keywords": tags,
                 "authors": [{"name": f"{collection.name} (imported web-task collection)"}]},
        "metadata": {"difficulty": entry.difficulty, "category": "computer-use", "tags": tags,
                     "source_format": WebCollectionFormat.name},
        # The verifier asks the running app over HTTP; it sees the attempt's changes only where the app
        # keeps its state (the app reads it back), every other one is put back to the image's state.
        # Harbor runs it in the agent's container ("shared"): a separate one would hold a fresh app.
        "verifier": {"timeout_sec": 120.0, "environment_mode": "shared", "outputs": list(collection.data)},
        "agent": {"timeout_sec": 900.0, "tools": ["browser"]},
        "environment": {"build_timeout_sec": 1800.0, "cpus": 1, "memory_mb": 2048, "storage_mb": 2048, "browser": True},
    }
    task = Task.create(name, config, instruction, files, source=str(root))
    parameters = {"collection": collection.name, "id": entry.id, "verify": f"{entry.verify_file}:{entry.function}",
                  "reference": entry.reference}
    return task.with_provenance(domain=DOMAIN, family=FAMILY_PREFIX + collection.name, parameters=parameters,
                                difficulty=entry.difficulty)


def convert(path: str | Path) -> tuple[Collection, list[tuple[str, Task | CollectionError]]]:
    """The collection and, per line of tasks.jsonl, (its id, its task or its error)."""
    collection = read_collection(path)
    return collection, [(label, item if isinstance(item, CollectionError) else to_task(collection, item))
                        for label, item in read_entries(collection)]


class WebCollectionFormat(TaskFormat):
    """External web-task collections (collection.toml, app/, tasks.jsonl, verifiers, reference states)."""

    name = "web-collection"
    description = "web-task collections: collection.toml ([app] start, [reference] load), app/, tasks.jsonl, verify(url) functions"
    can_export = False

    def detect(self, path: Path) -> bool:
        return (Path(path) / COLLECTION_TOML).is_file()

    def scan(self, path: Path) -> Iterator[Task | TaskFormatError]:
        try:
            _, items = convert(path)
        except TaskFormatError as exc:
            yield exc
            return
        for _, item in items:
            yield item if isinstance(item, Task) else CollectionError(f"{Path(path).name}/{item.message}",
                                                                      hint=item.hint)

    def labelled(self, path: Path) -> Iterator[tuple[str, Task | TaskFormatError]]:
        _, items = convert(path)
        yield from items

    def explain(self, report: Any) -> tuple[str, str]:
        return verdict(report)

    def count(self, path: Path) -> int | None:
        tasks = Path(path) / TASKS_JSONL
        return sum(1 for line in tasks.read_text(encoding="utf-8").splitlines() if line.strip()) if tasks.is_file() else None


# -- importing with admission ----------------------------------------------------------------------

def import_collection(path: str | Path, out: str | Path, *, check: bool = True, backend: str = "bwrap",
                      progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """``autoenvscaling computer-use import``: the collection's tasks as Harbor task directories under
    ``out``, one row per line of tasks.jsonl (``autoenvscaling.gates.importing``), the verdicts in the
    collection author's terms (``verdict``) and the collection's name in the report."""
    from autoenvscaling.api import import_tasks

    collection, items = convert(path)
    return import_tasks(items, out, check=check, backend=backend, progress=progress, explain=verdict,
                        report_fields={"collection": collection.name, "source": str(Path(path).resolve())})


def verdict(report: Any) -> tuple[str, str]:
    """(status, reason) of a task from its ValidationReport, in the collection author's terms."""
    if report.status == "valid":
        return "admitted", "lint, build, oracle and null gates passed"
    if report.status != "invalid":
        return "error", report.reason
    failed = next(g for g in report.gates if g.status == "fail")
    if failed.name == "null":
        reward = next((e.values.get("reward") for e in failed.evidence if "reward" in e.values), 1.0)
        return "rejected", NOP_PASSES.format(reward=f"{reward:g}")
    if failed.name == "oracle":
        if "solution/solve.sh" in failed.reason:  # the load script itself failed
            return "rejected", f"the reference load script failed: {failed.reason}"
        return "rejected", REFERENCE_FAILS
    if failed.name == "build":
        return "rejected", f"the image did not build: {failed.reason}"
    return "rejected", f"{failed.name}: {failed.reason}"



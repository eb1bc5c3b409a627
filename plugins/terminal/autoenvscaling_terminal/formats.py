"""The Endless Terminals task layout, imported into and exported from Harbor tasks.

An Endless Terminals task is a folder with ``task.json`` (``description``: what the agent is told,
``truth``: privileged ground truth for the tests, often ``name``), ``test_initial_state.py`` (pytest
checks of the environment before the agent acts), ``test_final_state.py`` (pytest checks of the
result) and a container definition: an Apptainer ``container.def`` or, in the Harbor-converted
releases, a ``Dockerfile``. Other files next to them are the container's build context; a built
``container.sif`` image and the ``solutions/`` sampling logs are not part of the task and are skipped.

Import (``read``) makes a Harbor task: the description becomes instruction.md; the container
definition becomes environment/Dockerfile (an Apptainer definition is translated: ``From`` ->
FROM, ``%post`` -> a build script run once, ``%environment`` exports -> ENV, ``%files`` -> COPY; the
original file is kept as environment/container.def so export can write it back unchanged); both test
files and the truth (tests/truth.txt) go to tests/, which the agent never sees; tests/test.sh runs
test_final_state.py and rewards 1 only when every check passes (the Endless Terminals convention).
Endless Terminals tasks have no reference solution, so imported tasks have no solution/solve.sh.

Export (``write``) does the reverse for any Harbor task. For a task without the two test files (our
generated tasks have one pytest file, tests/test_outputs.py) the final-state test is that file and
the initial-state test is its ``test_initial_*`` checks with the helpers they need; the truth is the
task's tests/truth.txt or, for generated tasks, the TRUTH literal embedded in the test file.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Iterable, Iterator

from autoenvscaling.api import Task, TaskFile, TaskFormat, TaskFormatError, qualified_name, short_name

TASK_JSON, INITIAL, FINAL = "task.json", "test_initial_state.py", "test_final_state.py"
_SKIPPED = {"container.sif", "solutions", "__pycache__", ".pytest_cache"}
HOME = "/home/user"


def is_et_task(path: Path) -> bool:
    return (path / TASK_JSON).is_file() and (path / FINAL).is_file()


class EndlessTerminalsFormat(TaskFormat):
    """Endless Terminals task folders (task.json, test_*_state.py, Dockerfile or container.def)."""

    name = "endless-terminals"
    description = "Endless Terminals task folders (task.json, test_initial_state.py, test_final_state.py, container.def or Dockerfile)"

    def detect(self, path: Path) -> bool:
        path = Path(path)
        return path.is_dir() and (is_et_task(path) or any(is_et_task(c) for c in path.iterdir() if c.is_dir()))

    def read(self, path: Path) -> Iterator[Task]:
        path = Path(path)
        dirs = [path] if is_et_task(path) else (
            sorted(c for c in path.iterdir() if c.is_dir() and is_et_task(c)) if path.is_dir() else [])
        if not dirs:
            raise TaskFormatError(f"{path}: no Endless Terminals task here",
                                  hint="a task folder holds task.json and test_final_state.py")
        for d in dirs:
            yield read_et_task(d)

    def write(self, tasks: Iterable[Task], dest: Path) -> Path:
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        for task in tasks:
            folder = short_name(task.name)
            if folder in ("", ".", "..") or "\x00" in folder:  # a name from elsewhere must not walk out of dest
                raise TaskFormatError(f"{task.name!r} cannot name a task folder", hint="rename the task")
            for rel, data in et_files(task).items():
                target = dest / folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        return dest


def read_et_task(path: Path) -> Task:
    from .render import verifier_files

    try:
        meta = json.loads((path / TASK_JSON).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskFormatError(f"{path.name}/{TASK_JSON}: not valid JSON: {exc}", hint="fix the JSON") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("description"), str) or not meta["description"].strip():
        raise TaskFormatError(f"{path.name}/{TASK_JSON}: no description", hint="task.json needs a non-empty \"description\"")
    names = [rel for rel in sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
             if rel.split("/", 1)[0] not in _SKIPPED and rel not in (TASK_JSON, INITIAL, FINAL)]
    files: dict[str, bytes | str | TaskFile] = {f"environment/{rel}": (path / rel).read_bytes() for rel in names}
    if "environment/Dockerfile" not in files:
        if "environment/container.def" not in files:
            raise TaskFormatError(f"{path.name}: no Dockerfile or container.def", hint="an Endless Terminals task needs a container definition")
        dockerfile, extra = dockerfile_from_def((path / "container.def").read_bytes().decode("utf-8", errors="replace"))
        files["environment/Dockerfile"] = dockerfile
        files.update({f"environment/{k}": v for k, v in extra.items()})
    final = (path / FINAL).read_bytes()
    files["tests/" + FINAL] = final
    if (path / INITIAL).is_file():
        files["tests/" + INITIAL] = (path / INITIAL).read_bytes()
    files["tests/truth.txt"] = str(meta.get("truth", ""))
    files.update(verifier_files(FINAL, "binary", imported=True))
    name = qualified_name(re.sub(r"[^A-Za-z0-9_.-]+", "-", str(meta.get("name") or path.name)).strip("-") or "task")
    extra_keys = {k: v for k, v in meta.items() if k not in ("description", "truth", "name")}
    config = {"schema_version": "1.1",
              "task": {"name": name, "description": meta["description"].strip().splitlines()[0][:200]},
              "metadata": {"category": "terminal", "source_format": "endless-terminals", "endless_terminals": extra_keys},
              "environment": {"workdir": HOME}}
    outputs = et_outputs(final.decode("utf-8", errors="replace"))
    if outputs:
        config["verifier"] = {"outputs": outputs}
    return Task.create(name, config, meta["description"], files, source=str(path))


_ABS_PATH = re.compile(r"(?<![\w.~-])/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.@+-]*)*")


def et_outputs(final_source: str) -> list[str] | None:
    """verifier ``outputs`` of an imported task, where they can be known: ``[HOME]`` when every
    absolute path its final-state test names lies under the agent's home and the test runs no
    command (whose result could depend on any part of the system). Otherwise None: the task keeps
    the protected view."""
    try:
        tree = ast.parse(final_source)
    except SyntaxError:
        return None
    paths: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            if any(n.split(".")[0] in ("subprocess", "pty", "pexpect", "sh", "shutil") for n in names):
                return None
        if isinstance(node, ast.Attribute) and node.attr in ("system", "popen", "spawnv", "spawnl", "execv", "execvp"):
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            paths += _ABS_PATH.findall(node.value)
    if not paths or any(not (p == HOME or p.startswith(HOME + "/")) for p in paths):
        return None
    return [HOME]


def dockerfile_from_def(text: str) -> tuple[str, dict[str, bytes]]:
    """A Dockerfile (and the extra build-context files it needs) equivalent to an Apptainer
    definition: the bootstrap image, %files, %environment exports and the %post script."""
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = re.match(r"^%(\w+)", line)
        if m:
            current = m.group(1).lower()
            sections.setdefault(current, [])
            continue
        if current is None:
            key, sep, value = line.partition(":")
            if sep and key.strip():
                header[key.strip().lower()] = value.strip()
        else:
            sections[current].append(line)
    image = header.get("from", "ubuntu:22.04")
    if header.get("bootstrap", "").lower() == "localimage":  # ./ubuntu_22.04.sif -> ubuntu:22.04
        m = re.match(r"(?:.*/)?([a-z0-9.-]+?)_([0-9][0-9.]*)\.sif$", image)
        image = f"{m.group(1)}:{m.group(2)}" if m else "ubuntu:22.04"
    lines = [f"FROM {image}"]
    extra: dict[str, bytes] = {}
    for line in sections.get("files", []):
        parts = line.split()
        if parts:
            lines.append(f"COPY {parts[0]} {parts[1] if len(parts) > 1 else parts[0]}")
    for line in sections.get("environment", []):
        m = re.match(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if m:
            lines.append(f"ENV {m.group(1)}={m.group(2).strip()}")
    post = "\n".join(sections.get("post", [])).strip()
    if post:
        extra["et-post.sh"] = ("#!/bin/bash\n# %post of container.def\nset -e\n" + post + "\n").encode()
        lines += ["COPY et-post.sh /tmp/et-post.sh", "RUN bash /tmp/et-post.sh && rm -f /tmp/et-post.sh"]
    lines.append(f"WORKDIR {HOME}")
    return "\n".join(lines) + "\n", extra


def et_files(task: Task) -> dict[str, bytes]:
    """The files of ``task`` in the Endless Terminals layout (paths relative to the task folder)."""
    tests = task.subtree("tests")
    final = tests.get(FINAL) or tests.get("test_outputs.py") or next((f for n, f in sorted(tests.items()) if n.startswith("test_") and n.endswith(".py")), None)
    if final is None:
        raise TaskFormatError(f"{task.name}: no pytest file in tests/", hint="Endless Terminals tasks are judged by pytest files")
    initial = tests.get(INITIAL)
    initial_data = initial.data if initial is not None else initial_state_module(final.text).encode()
    if "truth.txt" in tests:
        truth = tests["truth.txt"].text
    else:
        literal = embedded_truth(final.text)
        truth = json.dumps(literal, indent=1, sort_keys=True) if literal is not None else ""
    meta = {"name": short_name(task.name), "description": task.instruction or "", "truth": truth}
    extra = task.config.metadata.get("endless_terminals")
    if extra is not None and not isinstance(extra, dict):
        raise TaskFormatError(f"{task.name}: metadata.endless_terminals is a {type(extra).__name__}, not a table",
                              hint="write it as [metadata.endless_terminals] with the extra task.json keys, or remove it")
    meta.update({k: v for k, v in (extra or {}).items() if k not in meta})  # the task's own text wins
    out: dict[str, bytes] = {TASK_JSON: (json.dumps(meta, indent=4) + "\n").encode(), FINAL: final.data, INITIAL: initial_data}
    env = task.environment_files
    if "Dockerfile" not in env and "container.def" not in env:
        raise TaskFormatError(f"{task.name}: no environment/Dockerfile", hint="Endless Terminals needs a container definition")
    imported_def = "container.def" in env and task.config.metadata.get("source_format") == "endless-terminals"
    for rel, f in env.items():
        if imported_def and rel in ("Dockerfile", "et-post.sh"):
            continue  # derived from container.def on import; the definition itself is written back
        if rel in (TASK_JSON, INITIAL, FINAL):
            raise TaskFormatError(f"{task.name}: environment/{rel} clashes with an Endless Terminals file", hint="rename it")
        out[rel] = f.data
    return out


def embedded_truth(source: str) -> object | None:
    """The literal value of a module-level ``TRUTH = ...`` assignment, if there is one."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TRUTH" for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def initial_state_module(source: str) -> str:
    """The initial-state part of a pytest module: everything but the tests, plus the ``test_initial_*``
    tests (checks of the environment before the agent acts)."""
    from .render import select_checks

    tree = ast.parse(source)
    wanted = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_initial_")]
    return select_checks(source, wanted, where="test file")

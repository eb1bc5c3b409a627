"""Turn a generator's ``Draft`` into a Harbor task (a core ``Task``).

Every generated task has the same shape:

    task.toml              [metadata] difficulty/category/tags and [metadata.autoenvscaling] provenance
    instruction.md         what the agent reads
    environment/Dockerfile the domain-wide preamble (identical first lines in every task, so a layer
                           cache builds it once) + COPY of the task's files (+ a build-time setup RUN)
    environment/app/...    the files /app starts with
    tests/test.sh          runs the checks, writes /logs/verifier/reward.json and tests.json
    tests/test_outputs.py  the checks, with the hidden ground truth (TRUTH) embedded
    tests/reward.py        per-check results -> reward (fraction or binary)
    tests/aes_verifier.py  the verifier library reward.py imports (autoenvscaling.verifier)
    tests/pytest.ini       pins pytest's rootdir to /tests
    solution/solve.sh      the reference solution
"""

from __future__ import annotations

import ast
import hashlib
import pprint
from functools import lru_cache
from typing import Any

from autoenvscaling.api import Task, TaskFile, package_reader, qualified_name, render_task, verifier_library

from .families.base import Draft, label_of

DOMAIN = "terminal"
# The one preamble of every terminal task: the tools all families use, and what the verifier needs
# (python3 and Debian's pytest: the image carries its verifier, so the task verifies in Harbor online
# or offline, and here without any runtime of ours). Keeping these lines identical across tasks lets
# the bwrap layer cache build the toolbox once for a whole suite.
PREAMBLE = (
    "FROM debian:bookworm\n"
    "ENV LANG=C.UTF-8\n"
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
    "    git sqlite3 zip unzip xz-utils bzip2 jq gawk file less procps python3 python3-pytest \\\n"
    "    && rm -rf /var/lib/apt/lists/*\n"
    "WORKDIR /app\n"
)
REWARD_MODES = ("fraction", "binary")


package_text = package_reader(__package__)


@lru_cache(maxsize=64)
def _parsed(source: str) -> ast.Module:
    """The syntax tree of a checks file, parsed once per process (read, never changed): every task a
    family renders selects from the same few files, and parsing them was most of a task's rendering."""
    return ast.parse(source)


def select_checks(source: str, wanted: list[str], *, where: str, fragment: bool = False) -> str:
    """The module ``source`` with only the ``wanted`` test functions kept (helpers, imports and
    constants stay). Comments directly above a kept statement stay with it. A ``fragment`` (a file of
    checks/ other than _common.py) loses its relative imports: its ``from ._common import *`` shows
    the type checker the names the rendered file defines above it."""
    tree = _parsed(source)
    lines = source.splitlines()
    found = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
    missing = [w for w in wanted if w not in found]
    if missing:
        raise KeyError(f"{where}: no check named {', '.join(missing)}")
    out: list[str] = []
    previous_end = 0
    for node in tree.body:  # each chunk runs from the end of the previous statement: comments stay
        start = previous_end
        chunk = lines[start:node.end_lineno]
        previous_end = node.end_lineno or previous_end
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and node.name not in wanted:
            continue
        if fragment and isinstance(node, ast.ImportFrom) and node.level:
            chunk = lines[start:node.lineno - 1]  # the comments above it stay
        out.extend(chunk)
    return "\n".join(out).strip("\n") + "\n"


def checks_module(family: str, draft: Draft, truth: dict[str, Any], header: str) -> str:
    common = select_checks(package_text("checks", "_common.py"), ["test_initial_inputs_intact"], where="_common.py")
    specific = select_checks(package_text("checks", f"{family}.py"), draft.checks, where=f"{family}.py", fragment=True)
    inlined = "".join(f"\n# --- inlined from autoenvscaling_terminal/families/{m}.py ---\n{_without_docstring(package_text('families', m + '.py'))}\n"
                      for m in draft.inline)
    return (f'"""{header}"""\n\n'
            "# Hidden ground truth: reaches the sandbox only at verification time, never seen by the agent.\n"
            f"TRUTH = {pprint.pformat(truth, width=110, sort_dicts=True)}\n\n{common}\n{inlined}\n{specific}")


def _without_docstring(source: str) -> str:
    first = ast.parse(source).body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        source = "\n".join(source.splitlines()[first.end_lineno:])
    return source.strip("\n") + "\n"


# How test.sh runs the checks (@HOW@ tells it there, @RUN_CHECKS@ does it): ours with the image's own
# pytest; an imported task's, whose image may have none, first as Harbor's tasks do (uvx).
_IMAGE_PYTEST = (
    "with the image's own pytest (its Dockerfile installs python3 and\n"
    "#     pytest: the task verifies the same in Harbor, online or offline, and here), isolated\n"
    "#     (python3 -I), with a JUnit XML report.",
    '''    if python3 -I -c "import importlib.util as u, sys; sys.exit(u.find_spec('pytest') is None)" >/dev/null 2>&1; then
        python3 -I -m pytest --junitxml="$logs/junit.xml" /tests/@TEST_FILE@ -rA
    else
        echo "verifier: the image has no python3 with pytest (environment/Dockerfile installs them); every check counts as failed" >&2
    fi''')
_UVX_THEN_PYTEST = (
    "with Harbor's convention first (uvx with pinned pytest and the CTRF\n"
    "#     reporter), then an installed pytest, isolated (python3 -I), with a JUnit XML report (an\n"
    "#     imported image may lack pytest).",
    '''    if command -v uvx >/dev/null 2>&1; then
        uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 \\
            pytest --ctrf "$logs/ctrf.json" /tests/@TEST_FILE@ -rA
    fi
    if [ ! -s "$logs/ctrf.json" ]; then
        if python3 -I -c "import importlib.util as u, sys; sys.exit(u.find_spec('pytest') is None)" >/dev/null 2>&1; then
            python3 -I -m pytest --junitxml="$logs/junit.xml" /tests/@TEST_FILE@ -rA
        else
            echo "verifier: neither uvx nor pytest is available; every check counts as failed" >&2
        fi
    fi''')
_REWARD = "    python3 -I /tests/reward.py --mode @REWARD_MODE@"
# An imported image may have no python3 at all: then uv's Python scores the results, as uvx ran them.
_REWARD_IMPORTED = '''    if command -v python3 >/dev/null 2>&1; then
        python3 -I /tests/reward.py --mode @REWARD_MODE@
    else
        uv run --no-project python -I /tests/reward.py --mode @REWARD_MODE@
    fi'''


def verifier_files(test_file: str, reward_mode: str, *, imported: bool = False) -> dict[str, str]:
    """tests/test.sh for a pytest file in tests/ and a reward mode ("fraction" or "binary"), with the
    reward step it runs (reward.py and its library) and pytest.ini. Ours runs the image's pytest; an
    ``imported`` task's (whose image may have none) first tries uvx."""
    how, run = _UVX_THEN_PYTEST if imported else _IMAGE_PYTEST
    text = package_text("verifier", "test.sh").replace("@HOW@", how).replace("@RUN_CHECKS@", run)
    text = text.replace("@REWARD@", _REWARD_IMPORTED if imported else _REWARD)
    return {"tests/test.sh": text.replace("@TEST_FILE@", test_file).replace("@REWARD_MODE@", reward_mode),
            "tests/reward.py": package_text("verifier", "reward.py"),
            **{f"tests/{n}": library for n, library in verifier_library().items()},
            "tests/pytest.ini": package_text("verifier", "pytest.ini")}


def verifier_config(draft: Draft) -> dict[str, Any]:
    """``[verifier]``: Harbor's separate verifier with /app as its artifact, or, for a draft whose
    checks need the agent's own container (``shared_verifier``), Harbor's shared one; our outputs
    view is the same in both.

    The outputs are /app, the working directory, as a whole. Everything a task asks for and every
    input its checks read lies there (``Draft.outputs`` are relative to it), and only a whole
    directory carries deletions: Harbor's separate verifier gets a fresh copy of the image with each
    artifact put back over it, so a single deleted file would come back, while an artifact directory
    is emptied first.

    What the task asks for stays visible as ``agent_paths`` (each output's top folder or file under
    /app), even where the view would hide it as Python code the tests do not import: a folder of
    copied ``.py`` files is a namespace package in the working directory to that rule. Our test.sh
    runs its Python from /tests in isolated mode (``cd /tests``, ``python3 -I``), so nothing under
    /app is importable by the verifier's own interpreter."""
    mode = "shared" if draft.shared_verifier else "separate"
    asked = sorted({f"/app/{p.strip('/').split('/')[0]}" for p in draft.outputs if p.strip("/")})
    return {"timeout_sec": 300.0, "environment_mode": mode, "outputs": ["/app"], "agent_paths": asked}


def dockerfile(draft: Draft) -> str:
    lines = [PREAMBLE.rstrip("\n")]
    if draft.files:
        lines.append("COPY app/ /app/")
    steps = []
    if draft.executables:
        steps.append("chmod 755 " + " ".join(f"/app/{p}" for p in sorted(draft.executables)))
    if draft.setup is not None:
        lines.append("COPY setup/ /tmp/setup/")
        steps.append("bash /tmp/setup/setup.sh && rm -rf /tmp/setup")
    if steps:
        lines.append("RUN cd /app && " + " && ".join(steps))
    return "\n".join(lines) + "\n"


def render(family: str, draft: Draft, *, seed: int, level: int, reward_mode: str = "fraction") -> Task:
    """The Harbor task of ``draft``; ``reward_mode`` is one of REWARD_MODES (the domain checks it)."""
    label = label_of(level)
    name = qualified_name(f"{DOMAIN}-{family}-{draft.kind}-l{level}-s{seed}".replace("_", "-"))
    guarded = draft.files if draft.guard is None else {p: draft.files[p] for p in draft.guard}
    truth = dict(draft.truth)
    truth["inputs"] = {p: hashlib.sha256(data).hexdigest() for p, data in sorted(guarded.items())}
    header = (f"Checks for {name} (autoenvscaling-terminal, family {family}, kind {draft.kind}, "
              f"level {level}).\n\nChecks named test_initial_* guard the environment; the others score the work.\n")
    files: dict[str, bytes | str | TaskFile] = {
        "environment/Dockerfile": dockerfile(draft),
        **verifier_files("test_outputs.py", reward_mode),
        "tests/test_outputs.py": checks_module(family, draft, truth, header),
        "solution/solve.sh": "#!/bin/bash\n# Reference solution.\nset -eu\ncd /app\n\n" + draft.solution.strip("\n") + "\n",
    }
    for rel, data in draft.files.items():
        files[f"environment/app/{rel}"] = TaskFile(data=data, executable=rel in draft.executables)
    if draft.setup is not None:
        files["environment/setup/setup.sh"] = "#!/bin/bash\n# Build-time setup; removed from the image afterwards.\nset -euo pipefail\ncd /app\n\n" + draft.setup.strip("\n") + "\n"
        files.update({f"environment/setup/{rel}": data for rel, data in draft.setup_files.items()})
    tags = sorted({family.replace("_", "-"), draft.kind.replace("_", "-"), *draft.tags})
    asks = [f"/app/{p}" for p in dict.fromkeys(p.strip("/") for p in draft.outputs if p.strip("/"))]
    return render_task(
        domain=DOMAIN, family=family, seed=seed, difficulty=label, name=name, instruction=draft.instruction,
        description=f"{family.replace('_', ' ')}: {draft.kind.replace('_', ' ')} ({label})", files=files, tags=tags,
        verifier=verifier_config(draft), agent={"timeout_sec": draft.agent_timeout_sec},
        environment={"build_timeout_sec": 900.0, "cpus": 1, "memory_mb": 1024, "storage_mb": 2048, "workdir": "/app"},
        parameters={"kind": draft.kind, "level": level, "reward_mode": reward_mode, **draft.parameters},
        asks=asks)  # what the cheats aim at: /app is declared whole

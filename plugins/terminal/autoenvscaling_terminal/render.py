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
    tests/pytest.ini       pins pytest's rootdir to /tests
    solution/solve.sh      the reference solution
"""

from __future__ import annotations

import ast
import hashlib
import pprint
from functools import lru_cache
from importlib import resources
from typing import Any

from autoenvscaling.tasks import Task, TaskFile

from .families.base import Draft, label_of

DOMAIN = "terminal"
# The one preamble of every terminal task: the tools all families use. Keeping these lines identical
# across tasks lets the bwrap layer cache build the toolbox once for a whole suite.
PREAMBLE = (
    "FROM debian:bookworm\n"
    "ENV LANG=C.UTF-8\n"
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
    "    git sqlite3 zip unzip xz-utils bzip2 jq gawk file less \\\n"
    "    && rm -rf /var/lib/apt/lists/*\n"
    "WORKDIR /app\n"
)
REWARD_MODES = ("fraction", "binary")


@lru_cache(maxsize=None)
def package_text(*parts: str) -> str:
    return resources.files(__package__).joinpath(*parts).read_text(encoding="utf-8")


def select_checks(source: str, wanted: list[str], *, where: str) -> str:
    """The module ``source`` with only the ``wanted`` test functions kept (helpers, imports and
    constants stay). Comments directly above a kept statement stay with it."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
    missing = [w for w in wanted if w not in found]
    if missing:
        raise KeyError(f"{where}: no check named {', '.join(missing)}")
    out: list[str] = []
    previous_end = 0
    for node in tree.body:  # each chunk runs from the end of the previous statement: comments stay
        chunk = lines[previous_end:node.end_lineno]
        previous_end = node.end_lineno or previous_end
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and node.name not in wanted:
            continue
        out.extend(chunk)
    return "\n".join(out).strip("\n") + "\n"


def checks_module(family: str, draft: Draft, truth: dict[str, Any], header: str) -> str:
    common = select_checks(package_text("checks", "_common.py"), ["test_initial_inputs_intact"], where="_common.py")
    specific = select_checks(package_text("checks", f"{family}.py"), draft.checks, where=f"{family}.py")
    inlined = "".join(f"\n# --- inlined from autoenvscaling_terminal/families/{m}.py ---\n{_without_docstring(package_text('families', m + '.py'))}\n"
                      for m in draft.inline)
    truth_src = pprint.pformat(truth, width=110, sort_dicts=True)
    return (f'"""{header}"""\n\n'
            "# Hidden ground truth: reaches the sandbox only at verification time, never seen by the agent.\n"
            f"TRUTH = {truth_src}\n\n{common}\n{inlined}\n{specific}")


def _without_docstring(source: str) -> str:
    tree = ast.parse(source)
    first = tree.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        source = "\n".join(source.splitlines()[first.end_lineno:])
    return source.strip("\n") + "\n"


def _toml_safe(value: Any) -> Any:
    """``value`` without None entries (TOML has no null)."""
    if isinstance(value, dict):
        return {k: _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_toml_safe(v) for v in value if v is not None]
    return value


def verifier_script(test_file: str, reward_mode: str) -> str:
    """tests/test.sh for a pytest file in tests/ and a reward mode ("fraction" or "binary")."""
    return package_text("verifier", "test.sh").replace("@TEST_FILE@", test_file).replace("@REWARD_MODE@", reward_mode)


def verifier_outputs(draft: Draft) -> list[str]:
    """The task's ``[verifier] outputs``: what it asks the agent to produce or change, then the
    top-level entries of its inputs under /app (the checks read them: the input guard, files a step
    moves or deletes, bystanders that must come through untouched) that no output already covers."""
    asked = list(dict.fromkeys(p.strip("/") for p in draft.outputs if p.strip("/")))
    tops = sorted({rel.split("/", 1)[0] for rel in draft.files} - set(asked))
    tops = [t for t in tops if not any(t.startswith(a + "/") for a in asked)]
    return [f"/app/{p}" for p in [*asked, *tops]]


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
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode must be one of {REWARD_MODES}")
    label = label_of(level)
    name = f"{DOMAIN}-{family}-{draft.kind}-l{level}-s{seed}".replace("_", "-")
    guarded = draft.files if draft.guard is None else {p: draft.files[p] for p in draft.guard}
    truth = dict(draft.truth)
    truth["inputs"] = {p: hashlib.sha256(data).hexdigest() for p, data in sorted(guarded.items())}
    header = (f"Checks for {name} (autoenvscaling-terminal, family {family}, kind {draft.kind}, "
              f"level {level}).\n\nChecks named test_initial_* guard the environment; the others score the work.\n")
    files: dict[str, bytes | str | TaskFile] = {
        "environment/Dockerfile": dockerfile(draft),
        "tests/test.sh": verifier_script("test_outputs.py", reward_mode),
        "tests/reward.py": package_text("verifier", "reward.py"),
        "tests/pytest.ini": package_text("verifier", "pytest.ini"),
        "tests/test_outputs.py": checks_module(family, draft, truth, header),
        "solution/solve.sh": "#!/bin/bash\n# Reference solution.\nset -eu\ncd /app\n\n" + draft.solution.strip("\n") + "\n",
    }
    for rel, data in draft.files.items():
        files[f"environment/app/{rel}"] = TaskFile(data=data, executable=rel in draft.executables)
    if draft.setup is not None:
        files["environment/setup/setup.sh"] = "#!/bin/bash\n# Build-time setup; removed from the image afterwards.\nset -euo pipefail\ncd /app\n\n" + draft.setup.strip("\n") + "\n"
        for rel, data in draft.setup_files.items():
            files[f"environment/setup/{rel}"] = data
    tags = sorted({family.replace("_", "-"), draft.kind.replace("_", "-"), *draft.tags})
    config = {
        "schema_version": "1.1",
        "task": {"name": name, "description": f"{family.replace('_', ' ')}: {draft.kind.replace('_', ' ')} ({label})",
                 "keywords": tags, "authors": [{"name": "autoenvscaling-terminal"}]},
        "metadata": {"difficulty": label, "category": "terminal", "tags": tags},
        "verifier": {"timeout_sec": 300.0, "outputs": verifier_outputs(draft)},
        "agent": {"timeout_sec": draft.agent_timeout_sec},
        "environment": {"build_timeout_sec": 900.0, "cpus": 1, "memory_mb": 1024, "storage_mb": 2048, "workdir": "/app"},
    }
    task = Task.create(name, config, draft.instruction, files)
    parameters = _toml_safe({"kind": draft.kind, "level": level, "reward_mode": reward_mode, **draft.parameters})
    return task.with_provenance(domain=DOMAIN, family=family, parameters=parameters, seed=seed, difficulty=label)

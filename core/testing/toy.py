"""A tiny but real domain for tests and for plugin authors to read.

Two families whose tasks are small valid Harbor tasks that need only a shell: ``write-file`` (write
given text to a file) and ``count-lines`` (count lines of a generated file). Every verifier compares
against an answer that lives under tests/ (uploaded only at verification time), so the oracle scores
1 and doing nothing scores 0. Generation is deterministic: the same (family, seed, difficulty)
always gives an equal task.
"""

from __future__ import annotations

import random

from ..domains.base import DIFFICULTIES, Domain, Family
from ..errors import UsageError
from ..plugins.hookspecs import hookimpl
from ..tasks import PROVENANCE_KEY, Task, qualified_name

_WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
          "kelp", "lumen", "maple", "nectar", "onyx", "pollen", "quartz", "raven", "sable", "tundra")

_DOCKERFILE = "FROM debian:bookworm-slim\nWORKDIR /app\n"

# The verifier writes the reward file itself; it never relies on test.sh's exit code.
_TEST_SH = """#!/bin/bash
# {check_comment}
if {condition}; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


class ToyDomain(Domain):
    """Two tiny file tasks (write a file, count lines) for tests and examples."""

    name = "toy"
    description = "Two tiny file tasks (write a file, count lines) for tests and examples."
    sandbox_backend = "bwrap"

    def families(self) -> list[Family]:
        return [
            Family(name="write-file", description="Write exact text into a file.", skills=["shell", "files"]),
            Family(name="count-lines", description="Count (matching) lines of a generated file.",
                   skills=["shell", "text-processing"]),
        ]

    def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        if difficulty not in DIFFICULTIES:
            raise UsageError(f"unknown difficulty {difficulty!r}", hint=f"use one of: {', '.join(DIFFICULTIES)}")
        # A string seed is hashed with SHA-512 by random.seed: stable across processes and versions.
        rng = random.Random(f"toy:{family}:{seed}:{difficulty}")
        if family == "write-file":
            parameters, instruction, files = _write_file(rng, difficulty)
        elif family == "count-lines":
            parameters, instruction, files = _count_lines(rng, difficulty)
        else:
            known = ", ".join(f.name for f in self.families())
            raise UsageError(f"the toy domain has no family {family!r}", hint=f"known families: {known}")
        name = qualified_name(f"toy-{family}-{difficulty}-s{seed}")
        config = {
            "version": "1.0",
            "task": {"name": name, "description": f"toy {family} task ({difficulty})", "keywords": ["toy", family]},
            "metadata": {
                "difficulty": difficulty,
                "category": "toy",
                PROVENANCE_KEY: {"domain": self.name, "family": family, "seed": seed, "difficulty": difficulty,
                                 "parameters": parameters},
            },
            "verifier": {"timeout_sec": 30.0},
            "agent": {"timeout_sec": 60.0},
            "environment": {"build_timeout_sec": 120.0, "cpus": 1, "memory_mb": 512, "storage_mb": 256},
        }
        return Task.create(name, config, instruction, files)

    def redteam_tested(self, task: Task) -> bool:
        """Toy tasks, exactly as generated, leave the red-team gate alone: tests/redteam attacks both
        families' verifiers with every gate cheat (the kit's tests validate many toy tasks, and each
        gate cheat is one more sandbox attempt)."""
        from ..domains.base import same_task_content

        prov = task.provenance
        if prov.domain != self.name or prov.seed is None or prov.family not in {f.name for f in self.families()}:
            return False
        try:
            twin = self.generate(prov.family, seed=int(prov.seed), difficulty=prov.difficulty or "medium")
        except (UsageError, ValueError):
            return False
        return same_task_content(task, twin)


def _write_file(rng: random.Random, difficulty: str) -> tuple[dict, str, dict[str, str]]:
    n_lines = {"easy": 1, "medium": 3, "hard": 6}[difficulty]
    lines = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 5))) for _ in range(n_lines)]
    if difficulty == "hard":
        # Characters a careless `echo` mangles: leading spaces, a dollar sign, quotes, a backslash.
        lines[1] = "   " + lines[1]
        lines[2] = f"$HOME is not expanded: '{lines[2]}' \"quoted\" \\n"
        path = f"/app/out/{rng.choice(_WORDS)}/notes.txt"
    else:
        path = f"/app/{rng.choice(_WORDS)}.txt"
    content = "\n".join(lines) + "\n"
    instruction = (f"Create the file `{path}` (and any missing directories) whose content is exactly the "
                   f"text between the markers below, ending with a single newline.\n\n"
                   f"-----BEGIN-----\n{content}-----END-----\n")
    # A quoted here-document writes the text verbatim: no expansion, no escapes.
    solve = f"#!/bin/bash\nset -e\nmkdir -p {path.rsplit('/', 1)[0]}\ncat > {path} <<'AES_EOF'\n{content}AES_EOF\n"
    test = _TEST_SH.format(check_comment=f"{path} must equal /tests/expected.txt byte for byte",
                           condition=f"[ -f {path} ] && cmp -s {path} /tests/expected.txt")
    files = {"environment/Dockerfile": _DOCKERFILE, "solution/solve.sh": solve, "tests/test.sh": test,
             "tests/expected.txt": content}
    return {"path": path, "lines": n_lines}, instruction, files


def _count_lines(rng: random.Random, difficulty: str) -> tuple[dict, str, dict[str, str]]:
    n_lines = {"easy": rng.randint(5, 15), "medium": rng.randint(40, 120), "hard": rng.randint(300, 900)}[difficulty]
    word = rng.choice(_WORDS)
    lines = []
    for _ in range(n_lines):
        # medium and hard tasks have blank lines, which change what "count" means.
        if difficulty != "easy" and rng.random() < 0.2:
            lines.append("")
        else:
            lines.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6))))
    if difficulty == "easy":
        answer, what, solve_cmd = len(lines), "lines", "wc -l < /app/input.txt"
    elif difficulty == "medium":
        answer = sum(1 for line in lines if line)
        what, solve_cmd = "non-empty lines", "grep -c . /app/input.txt"
    else:
        # grep -c prints 0 but exits 1 when nothing matches: the group keeps `set -e` from stopping there.
        answer = sum(1 for line in lines if word in line.split())
        what, solve_cmd = f"lines that contain the word `{word}`", f"{{ grep -c -w -F {word} /app/input.txt || true; }}"
    instruction = (f"Count the {what} of `/app/input.txt`. Write just the number (digits only) to "
                   f"`/app/answer.txt`.\n")
    solve = f"#!/bin/bash\nset -e\n{solve_cmd} > /app/answer.txt\n"
    test = _TEST_SH.format(check_comment=f"the expected count is {answer}",
                           condition=f'[ -f /app/answer.txt ] && [ "$(tr -d \'[:space:]\' < /app/answer.txt)" = "{answer}" ]')
    files = {"environment/Dockerfile": _DOCKERFILE + "COPY input.txt /app/input.txt\n",
             "environment/input.txt": "\n".join(lines) + "\n", "solution/solve.sh": solve, "tests/test.sh": test}
    parameters = {"lines": n_lines, "answer": answer} | ({"word": word} if difficulty == "hard" else {})
    return parameters, instruction, files


@hookimpl
def autoenvscaling_register_domains(registrar):  # noqa: ANN001 - hook signature
    """Registers the toy domain when this module is registered as a plugin (``aes_register``)."""
    registrar.add("toy", ToyDomain)

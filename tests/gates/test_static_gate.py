"""The declared static lint gate every domain's lint builds on: required files, the domain's own
checks, and hidden verifier files copied into the image."""

from __future__ import annotations

import asyncio

from autoenvscaling.gates.static import DomainLintGate
from autoenvscaling.tasks import Task
from autoenvscaling.testing import ToyDomain

SECRET = "the expected answer, long enough to count as a copy: " + "x" * 40 + "\n"


class ToyLint(DomainLintGate):
    name = "toy-lint"
    domain = "toy"
    required = ("tests/test.sh", "tests/expected.txt")
    visible = ("tests/shared.txt",)

    @classmethod
    def domain_problem(cls, task: Task) -> str:
        return "the expected answer is empty" if not task.files["tests/expected.txt"].data.strip() else ""


def _task(changes: dict[str, str | None] | None = None) -> Task:
    """A toy task with a hidden expected answer, its files changed (None deletes one)."""
    base = ToyDomain().generate("write-file", seed=1)
    files = {p: f.data for p, f in base.files.items()} | {"tests/expected.txt": SECRET}
    for path, data in (changes or {}).items():
        if data is None:
            files.pop(path, None)
        else:
            files[path] = data
    return Task.create(base.name, base.config.to_dict(), base.instruction, files)


def test_a_well_formed_task_passes_and_the_gate_runs_as_a_gate():
    assert ToyLint.findings(_task()) == ("", [])
    result = asyncio.run(ToyLint().check(_task(), None))  # static: the context is never read
    assert result.status == "pass"


def test_the_first_missing_required_file_is_the_reason():
    assert ToyLint.problem(_task({"tests/test.sh": None})) == "tests/test.sh is missing"
    assert ToyLint.problem(_task({"tests/test.sh": None, "tests/expected.txt": None})) == "tests/test.sh is missing"


def test_the_domain_check_runs_after_the_required_files():
    assert ToyLint.problem(_task({"tests/expected.txt": None})) == "tests/expected.txt is missing"
    assert ToyLint.problem(_task({"tests/expected.txt": "\n"})) == "the expected answer is empty"


def test_a_hidden_file_copied_into_the_image_is_refused_unless_declared_visible():
    leaked = _task({"environment/app/notes.txt": SECRET})
    assert ToyLint.problem(leaked) == "environment/app/notes.txt is a copy of a hidden verifier file"
    # the same bytes in a file the domain declares visible on both sides: allowed
    assert ToyLint.problem(_task({"tests/shared.txt": "y" * 100, "environment/app/shared.txt": "y" * 100})) == ""
    # ... but the same file not declared visible is a leak (the positive control of the exception)
    assert "is a copy of a hidden" in ToyLint.problem(_task({"tests/other.txt": "y" * 100, "environment/app/o.txt": "y" * 100}))
    # a file at or under the floor is too generic to count
    assert ToyLint.problem(_task({"tests/one.txt": "1\n", "environment/app/one.txt": "1\n"})) == ""


def test_an_exempt_task_passes_with_the_reason():
    class Exempting(ToyLint):
        @classmethod
        def exempt(cls, task: Task) -> str:
            return "imported: its own verifier is the check"

    result = asyncio.run(Exempting().check(_task({"tests/test.sh": None}), None))
    assert (result.status, result.reason) == ("pass", "imported: its own verifier is the check")

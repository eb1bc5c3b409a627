"""``DomainLintGate``: the skeleton of a domain's static lint gate, declared rather than written.

A domain names the files every one of its tasks has (``required``) and the files whose content must
never reach the image (``hidden``: path prefixes or paths, minus ``visible`` exceptions); the gate
fails on the first missing file, then on the domain's own checks (``domain_problem``), then on any
file under environment/ that is a byte copy of a hidden one (a verifier spec or answer smuggled into
the image, where the agent reads it). Files of ``copy_floor`` bytes or fewer are too generic to
count as copies. Everything is a class method, so a test can ask ``MyLintGate.problem(task)``.

    class MyLintGate(DomainLintGate):
        name = "my-lint"
        domain = "my_domain"
        required = ("tests/test.sh", "tests/spec.json", "solution/solve.sh")

        @classmethod
        def domain_problem(cls, task: Task) -> str:
            return "" if json.loads(task.files["tests/spec.json"].text).get("answer") else "the spec has no answer"
"""

from __future__ import annotations

import time
from typing import ClassVar

from ..tasks import Task
from .base import Gate, GateContext, GateResult


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in prefixes)


class DomainLintGate(Gate):
    order = 16
    #: files every task of the domain must have
    required: ClassVar[tuple[str, ...]] = ()
    #: prefixes ("tests/") or paths whose content must not appear under environment/
    hidden: ClassVar[tuple[str, ...]] = ("tests/",)
    #: exceptions to ``hidden``: files the image carries on purpose (a seed both sides load)
    visible: ClassVar[tuple[str, ...]] = ()
    #: copies of files this size or smaller are not reported (an empty file, "0\n")
    copy_floor: ClassVar[int] = 64

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        start = time.monotonic()
        exempt = self.exempt(task)
        if exempt:
            return self.result("pass", exempt, seconds=time.monotonic() - start)
        problem, warnings = self.findings(task)
        if problem:
            return self.result("fail", problem, seconds=time.monotonic() - start)
        return self.passed(task, warnings, seconds=time.monotonic() - start)

    def passed(self, task: Task, warnings: list[str], *, seconds: float) -> GateResult:
        """The passing result (override to add the domain's evidence)."""
        return self.result("pass", "; ".join(warnings), seconds=seconds)

    @classmethod
    def exempt(cls, task: Task) -> str:
        """Why ``task`` passes without checks (an imported task judged by its own verifier), or ""."""
        return ""

    @classmethod
    def findings(cls, task: Task) -> tuple[str, list[str]]:
        """(the first problem or "", warnings)."""
        problem = cls.missing(task) or cls.domain_problem(task) or cls.hidden_copy(task)
        return problem, [] if problem else cls.warnings(task)

    @classmethod
    def problem(cls, task: Task) -> str:
        return cls.findings(task)[0]

    @classmethod
    def domain_problem(cls, task: Task) -> str:
        """The domain's own static checks: the first problem, or ""."""
        return ""

    @classmethod
    def warnings(cls, task: Task) -> list[str]:
        """Findings that do not reject the task."""
        return []

    @classmethod
    def missing(cls, task: Task) -> str:
        return next((f"{required} is missing" for required in cls.required if required not in task.files), "")

    @classmethod
    def hidden_copy(cls, task: Task) -> str:
        hidden = {f.data for p, f in task.files.items() if _under(p, cls.hidden) and not _under(p, cls.visible)}
        copies = (path for path, file in task.files.items()
                  if path.startswith("environment/") and len(file.data) > cls.copy_floor and file.data in hidden)
        return next((f"{path} is a copy of a hidden verifier file" for path in copies), "")

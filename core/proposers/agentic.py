"""The agentic proposer: an LLM agent builds the task directory in its own terminal sandbox.

The agent gets a workspace sandbox (a Debian root, no network) holding a skeleton task directory,
the domain guide with the task contract, and worked examples. It edits files with ``bash``; its
``check`` tool reads the task directory *out of* the sandbox (``get_archive``) and runs the
admission gates here, on that copy, so nothing the agent does can change how it is judged. After
at most 1 + ``max_revisions`` checks it calls ``finish``, and the final directory is read back the
same way. This is the proposer kind that raised the valid-environment rate in the paper.
"""

from __future__ import annotations

import tarfile
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from ..agents.base import AgentLimits
from ..archive import extract_tar
from ..agents.solver import SolverAgent, prompt_text
from ..agents.tools import Arguments, BashTool, Tool, ToolContext, ToolOutcome
from ..domains.base import Domain
from ..errors import AESError, TaskFormatError
from ..gates.base import ValidationReport
from ..sandbox.base import Sandbox
from ..tasks import Task, read_task
from .base import Checker, Proposal, Proposer
from .prompt import PROMPTS, describe_report, guide_and_contract, worked_example

WORKSPACE = "/workspace"
TASK_DIR = f"{WORKSPACE}/task"
# The workspace is a plain Debian root with python3 (python:3.11-slim): a shell, coreutils and python3, nothing more.
_WORKSPACE_TASK = Task.create("agentic-workspace", {"version": "1.0", "task": {"name": "agentic-workspace"}},
                              None, {"environment/Dockerfile": f"FROM python:3.11-slim\nWORKDIR {WORKSPACE}\n"})


def skeleton() -> dict[str, tuple[bytes, bool]]:
    """The starting task directory (package data prompts/skeleton/), as ``{path: (bytes, executable)}``."""
    with resources.as_file(resources.files(PROMPTS).joinpath("prompts", "skeleton")) as root:
        return {p.relative_to(root).as_posix(): (p.read_bytes(), p.suffix == ".sh")
                for p in sorted(root.rglob("*")) if p.is_file()}


async def read_back(sandbox: Sandbox) -> Task:
    """The task directory out of the sandbox, parsed like any task on disk (symlinks refused)."""
    data = await sandbox.get_archive(TASK_DIR)
    with tempfile.TemporaryDirectory(prefix="aes-agentic-") as tmp:
        extract_tar(data, tmp, check=_regular)
        return read_task(Path(tmp) / Path(TASK_DIR).name)


def _regular(member: tarfile.TarInfo) -> None:
    if not (member.isfile() or member.isdir()):
        kind = "symbolic links" if member.issym() else "links and special files"
        raise TaskFormatError(f"{member.name}: {kind} are not allowed in tasks", hint="write a regular file")


class CheckTool(Tool):
    """The agent's ``check``: the task directory is copied out of the workspace sandbox and judged
    here by ``checker`` (the admission gates), out of the agent's reach. It remembers the last task
    checked and its report; after ``allowed`` checks it only says that none are left."""

    name = "check"
    description = ("Run the admission checks on the task directory as it is now; returns the verdict and the "
                   "evidence of every failing check.")

    def __init__(self, checker: Checker, allowed: int) -> None:
        self.checker = checker
        self.allowed = allowed
        self.used = 0
        self.task: Task | None = None
        self.report: ValidationReport | None = None

    async def run(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        start = time.monotonic()
        text = await self._check(context.sandbox)
        return ToolOutcome(text=text, action=self.action(arguments, text, seconds=time.monotonic() - start))

    async def _check(self, sandbox: Sandbox) -> str:
        if self.used >= self.allowed:
            return f"No checks left (you had {self.allowed}). Call finish() to hand in the task."
        self.used += 1
        left = self.allowed - self.used
        try:
            task = await read_back(sandbox)
        except AESError as exc:
            return f"The task directory cannot be read: {exc.message}. Fix it ({left} check(s) left)."
        report = await self.checker(task)
        self.task, self.report = task, report
        return _report_text(report, left)


class AgenticProposer(Proposer):
    """An LLM agent with bash, ``check`` and ``finish`` builds the task in its own sandbox."""

    name = "agentic"
    needs_checker = True
    needs_backend = True

    def __init__(self, *, limits: AgentLimits | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limits = limits or AgentLimits(max_turns=40, max_tokens=400_000, timeout_sec=1800.0,
                                            command_timeout_sec=120.0, observation_chars=4000)

    async def propose(self, assignment: Any, *, domain: Domain, seed: int) -> Proposal:
        start = time.monotonic()
        checks_allowed = 1 + self.max_revisions
        check = CheckTool(self.checker, checks_allowed)  # type: ignore[arg-type]
        try:
            backend = self.require_backend()
            prepared = await backend.prepare(_WORKSPACE_TASK)
            sandbox = await backend.create(_WORKSPACE_TASK, prepared)
        except AESError as exc:
            return Proposal(task=None, kind=self.name, model=self.model, infrastructure_failure=True,
                            error=f"workspace sandbox: {exc.message}", seconds=time.monotonic() - start)
        async with sandbox:
            await sandbox.upload_files(_workspace_files(domain), WORKSPACE)
            # check() needs tool calls: its verdicts are long and structured, beyond the fenced-block protocol.
            agent = SolverAgent(self.llm, temperature=self.temperature, max_tokens_per_turn=self.max_tokens, seed=seed,
                                tool_calling=True)
            user = prompt_text(PROMPTS, "agentic_user.md", workspace=WORKSPACE, assignment=assignment.text)
            system = prompt_text(PROMPTS, "agentic_system.md", checks=checks_allowed)
            trajectory = await agent.converse(sandbox, user, limits=self.limits, system=system,
                                              tools=[BashTool(), check])
            final: Task | None
            try:
                final = await read_back(sandbox)
                error = None
            except AESError as exc:
                final, error = None, f"the final task directory cannot be read: {exc.message}"
        report = check.report
        if final is None or check.task is None or final.digest() != check.task.digest():
            report = None  # the agent changed the task after its last check: validate it afresh
        cost = trajectory.cost_usd
        if final is not None:
            final = self.stamp(final, assignment, seed=seed, tokens_in=trajectory.tokens_in,
                               tokens_out=trajectory.tokens_out, cost_usd=cost)
        stop = trajectory.stop_reason
        return Proposal(
            task=final, kind=self.name, model=self.model, tokens_in=trajectory.tokens_in,
            tokens_out=trajectory.tokens_out, cost_usd=cost, attempts=sum(1 for m in trajectory.messages
                                                                          if m.get("role") == "assistant"),
            revisions=max(0, check.used - 1), refused=stop == "refused", infrastructure_failure=stop == "infrastructure",
            error=error or (trajectory.error if stop in ("refused", "infrastructure", "budget") else None),
            seconds=time.monotonic() - start, report=report, transcript=trajectory.messages,
        )


def _workspace_files(domain: Domain) -> dict[str, tuple[bytes, bool]]:
    guide, contract = guide_and_contract(domain)
    files: dict[str, tuple[bytes, bool]] = {
        "GUIDE.md": (f"# {domain.name} domain guide\n\n{guide}\n\n# Task directory contract\n\n{contract}\n".encode(), False),
        "examples/README.md": (("Worked examples, in the FILE-block format (one file per block):\n\n"
                                + worked_example(domain)).encode(), False),
    }
    files.update({f"task/{p}": v for p, v in skeleton().items()})
    return files


def _report_text(report: ValidationReport, left: int) -> str:
    gates = "\n".join(f"- {g.name}: {g.status}" + (f" ({g.reason})" if g.reason else "") for g in report.gates)
    failing = f"Failing checks and their evidence:\n{describe_report(report)}\n\n"
    if report.valid:
        nxt = "The task passes. Call finish() to hand it in."
    elif left > 0:
        nxt = failing + f"Fix them, then call check() again ({left} check(s) left)."
    else:
        nxt = failing + "No checks left: fix what you can and call finish()."
    return prompt_text(PROMPTS, "check_report.md", status=report.status, reason=report.reason, gates=gates, next=nxt)

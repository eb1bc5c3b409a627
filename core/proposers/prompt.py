"""LLM proposers that answer in one response: ``prompt`` (one shot) and ``prompt-feedback`` (the
admission gates' build and test errors go back to the model, up to ``max_revisions`` times).

The model sees the domain guide, the task-directory contract, one worked example rendered in the
response format, its assignment and the format rules (all package data under prompts/). Its answer
is parsed by ``response.parse_task``; a malformed answer is a failed (scored) proposal, a refusal or
an unreachable server is not scored.
"""

from __future__ import annotations

import time
from typing import Any

from ..agents.solver import prompt_text, truncate_middle
from ..domains.base import Domain
from ..errors import AESError
from ..gates.base import ValidationReport
from ..llm.base import ChatMessage, UsageTotals
from ..llm.errors import BudgetExceeded, LLMError, LLMRefusal
from ..tasks import PROVENANCE_KEY, Task, read_task
from .base import Proposal, Proposer
from .response import MalformedResponse, parse_task, render_task

PROMPTS = "autoenvscaling.proposers"
EXAMPLE_CHARS = 8000  # longer worked examples crowd out the assignment in small context windows


def guide_and_contract(domain: Domain) -> tuple[str, str]:
    kit = domain.kit()
    contract = prompt_text(PROMPTS, "contract.md")
    if kit is None:
        return f"(the {domain.name} domain ships no guide)", contract
    return kit.guide.strip(), (kit.contract.strip() or contract)


def worked_example(domain: Domain) -> str:
    """The smallest of the domain kit's examples, else a task from its first generator, rendered in
    the response format so the example also teaches the format."""
    candidates: list[Task] = []
    kit = domain.kit()
    for path in (kit.examples if kit else []):
        try:
            candidates.append(read_task(path))
        except AESError:
            continue  # a broken example must not stop proposing
    if not candidates and domain.families():
        candidates.append(domain.generate(domain.families()[0].name, seed=0, difficulty="easy"))
    if not candidates:
        return "(no example available)"
    text = min((render_task(_without_provenance(t)) for t in candidates), key=len)
    return truncate_middle(text, EXAMPLE_CHARS)


def _without_provenance(task: Task) -> Task:
    """Our provenance block is bookkeeping, not part of what a proposer should imitate."""
    metadata = {k: v for k, v in task.config.metadata.items() if k != PROVENANCE_KEY}
    return task.with_config(task.config.model_copy(update={"metadata": metadata}))


def first_prompt(domain: Domain, assignment: Any) -> str:
    guide, contract = guide_and_contract(domain)
    return prompt_text(PROMPTS, "prompt_user.md", guide=guide, contract=contract, example=worked_example(domain),
                       assignment=assignment.text, response_format=prompt_text(PROMPTS, "response_format.md"))


def describe_report(report: ValidationReport, *, tail_chars: int = 800) -> str:
    """The failing gates of a report, with their evidence, as the model should read them."""
    lines = []
    for gate in report.gates:
        if gate.status in ("pass", "skip"):
            continue
        lines.append(f"- {gate.name}: {gate.status}: {gate.reason}")
        for ev in gate.evidence:
            if ev.command:
                lines.append(f"  command: {ev.command}")
            if ev.output_tail.strip():
                lines.append("  output:\n" + "\n".join("    " + x for x in
                                                       truncate_middle(ev.output_tail.strip(), tail_chars).splitlines()))
            if ev.values:
                lines.append(f"  values: {ev.values}")
    return "\n".join(lines) or f"- {report.status}: {report.reason}"


class PromptProposer(Proposer):
    """One LLM response becomes a task directory; no second chance."""

    name = "prompt"

    def revisions_allowed(self) -> int:
        return 0

    async def propose(self, assignment: Any, *, domain: Domain, seed: int) -> Proposal:
        start = time.monotonic()
        messages = [ChatMessage.system(prompt_text(PROMPTS, "system.md")),
                    ChatMessage.user(first_prompt(domain, assignment))]
        spend = UsageTotals()  # what the model calls of this proposal cost
        allowed = self.revisions_allowed()
        task: Task | None = None
        report: ValidationReport | None = None
        problem = "no answer"

        def done(**kw: Any) -> Proposal:
            final = task
            cost = None if spend.unpriced_calls else spend.cost_usd  # one unpriced call makes the total unknown
            if final is not None:
                final = self.stamp(final, assignment, seed=seed, tokens_in=spend.prompt_tokens,
                                   tokens_out=spend.completion_tokens, cost_usd=cost)
            # The report was made for the unstamped task; provenance does not change any gate's verdict.
            return Proposal(task=final, kind=self.name, model=self.model, tokens_in=spend.prompt_tokens,
                            tokens_out=spend.completion_tokens, cost_usd=cost, attempts=spend.calls,
                            revisions=max(0, spend.calls - 1), seconds=time.monotonic() - start, report=report,
                            transcript=[m.model_dump(mode="json") for m in messages], **kw)

        for attempt in range(allowed + 1):
            try:
                response = await self.require_llm().chat(messages, temperature=self.temperature, max_tokens=self.max_tokens,
                                               seed=seed * 10 + attempt)
            except LLMRefusal as exc:
                return done(refused=True, error=exc.message)
            except BudgetExceeded as exc:  # the last answer (and its report) stand as the proposal
                return done(error=problem if task is not None else exc.message)
            except LLMError as exc:
                if not exc.scored:
                    return done(infrastructure_failure=True, error=exc.message)
                spend.calls += 1  # the reply never reached us; the feedback follows the last user turn
                task, report, problem = None, None, f"unreadable reply: {exc.message}"
            else:
                spend.add(response)
                if response.refusal:
                    return done(refused=True, error=response.refusal)
                messages.append(ChatMessage.assistant(response.message.content))
                task, report, problem = await self._read(response.message.content, assignment, seed, allowed)
                # An infrastructure error in the gates is not the model's to fix: stop and let the
                # flywheel record it as such.
                if task is not None and (report is None or report.valid or report.status == "error"):
                    return done()
            if attempt < allowed:
                messages.append(ChatMessage.user(prompt_text(PROMPTS, "feedback.md", problems=problem,
                                                             left=allowed - attempt)))
        return done(error=problem)

    async def _read(self, content: str, assignment: Any, seed: int,
                    allowed: int) -> tuple[Task | None, ValidationReport | None, str]:
        """Parse a reply and, when revisions are allowed, check it: (task, report, problem)."""
        try:
            task = parse_task(content, fallback_name=f"{assignment.domain}-{self.name}-{seed}")
        except MalformedResponse as exc:
            return None, None, f"malformed response: {exc.message}"
        if allowed == 0 or self.checker is None:
            return task, None, ""
        report = await self.checker(task)
        return task, report, "" if report.valid else describe_report(report)


class PromptFeedbackProposer(PromptProposer):
    """Like ``prompt``, but build and test errors from the admission gates go back to the model,
    which revises the whole task, up to ``max_revisions`` times."""

    name = "prompt-feedback"
    needs_checker = True

    def revisions_allowed(self) -> int:
        return self.max_revisions

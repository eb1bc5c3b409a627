"""The procedural proposer: a domain's own generators, no LLM.

A fresh assignment generates a task of the asked family and difficulty; an assignment with a parent
asks the domain for a variant in the assignment's direction (``Domain.vary``), or for a "different"
one when the parent is already the domain's simplest (hardest) variant. It is the baseline the
LLM proposers are compared with, and what ``autoenvscaling run`` uses when no model is configured.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from ..domains.base import Domain
from ..errors import AESError, NoFurtherVariant
from .base import Proposal, Proposer


class ProceduralProposer(Proposer):
    """Generates or varies tasks with the domain's generators."""

    name = "procedural"
    needs_llm: ClassVar[bool] = False

    async def propose(self, assignment: Any, *, domain: Domain, seed: int) -> Proposal:
        start = time.monotonic()
        try:
            if assignment.parent_task is not None:
                try:
                    task = await domain.avary(assignment.parent_task, direction=assignment.direction, seed=seed)
                except NoFurtherVariant:  # nothing simpler (harder) to give: another skill at this level
                    assignment = assignment.model_copy(update={"direction": "different"})
                    task = await domain.avary(assignment.parent_task, direction="different", seed=seed)
            else:
                family = assignment.family or domain.families()[0].name
                task = await domain.agenerate(family, seed=seed, difficulty=assignment.difficulty)
        except (AESError, ValueError) as exc:
            # A generator that cannot honour the request is the proposer's own (scored) failure.
            message = exc.message if isinstance(exc, AESError) else str(exc)
            return Proposal(task=None, kind=self.name, error=f"generator failed: {message}",
                            seconds=time.monotonic() - start)
        return Proposal(task=self.stamp(task, assignment, seed=seed), kind=self.name,
                        seconds=time.monotonic() - start)

"""What a suite says about its tasks: index records, filters, statistics and the result of an add."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from .facets import Facets

UNVALIDATED = "unvalidated"  # the status of a task added without a validation report


class _StoredTask(BaseModel):
    """The leading columns of a `TaskRecord`: which stored task the row is. (Only a base of
    `TaskRecord`, which is frozen like its other base, `Facets`.)"""

    name: str
    dir: str
    digest: str
    source_digest: str
    key: str | None = None
    status: str = UNVALIDATED


class TaskRecord(Facets, _StoredTask):
    """One row of the suite index. ``dir`` is the folder under ``<suite>/tasks/``; ``digest`` is the
    stored task's ``Task.digest()``; ``source_digest`` the digest of the task as it was given (they
    differ when a name clash made the suite rename it); ``key`` the caller's idempotency key (e.g. a
    proposal id); ``status`` the validation verdict ("valid", ...) or "unvalidated"; then the task's
    `Facets`. (Pydantic puts the fields of the last base first, so a dumped record keeps the column
    order of the index: ``_StoredTask``'s, the facets, then the fields below.)"""

    added_at: str  # ISO 8601, UTC
    source: str | None = None
    report: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        """The record as JSON without the (possibly large) validation report."""
        return self.model_dump(mode="json", exclude={"report"})


class TaskFilter(BaseModel):
    """Which tasks to select. Each field takes one value or several; a task matches a field when its
    value is any of them, and matches ``tags`` when it carries every tag given. Empty fields match
    everything."""

    model_config = ConfigDict(frozen=True)

    domain: tuple[str, ...] = ()
    family: tuple[str, ...] = ()
    difficulty: tuple[str, ...] = ()
    category: tuple[str, ...] = ()
    status: tuple[str, ...] = ()
    proposer: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @field_validator("*", mode="before")
    @classmethod
    def _tuple(cls, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        return tuple(str(v) for v in value)


class SuiteStats(BaseModel):
    """Counts and sizes of a suite (or of the filtered part of it). Tasks without a value for a facet
    are counted under "(none)"; ``instruction_chars`` holds min, p50, p90, p99, max and mean."""

    model_config = ConfigDict(frozen=True)

    tasks: int
    by_domain: dict[str, int]
    by_family: dict[str, int]
    by_difficulty: dict[str, int]
    by_category: dict[str, int]
    by_tag: dict[str, int]
    by_proposer: dict[str, int]
    by_status: dict[str, int]
    instruction_chars: dict[str, int | float]
    total_bytes: int


class AddResult(BaseModel):
    """What ``SuiteStore.add`` did: ``new`` is False when the task (same key or digest) was already
    there, and ``record`` is then the existing entry."""

    model_config = ConfigDict(frozen=True)

    record: TaskRecord
    new: bool

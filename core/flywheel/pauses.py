"""Pausing what keeps failing the same way: a domain whose generator crashes on every proposal, or a
proposer whose model server is down, is set aside with its reason while the rest of the run goes on.

Pauses are derived from the recorded units alone (in round and slot order), so a resumed run plans
every batch exactly as the interrupted one did. Who is to blame follows the spread of the failures:

- a domain is paused when its last ``PAUSE_AFTER`` proposals failed the same way and came from more
  than one proposer kind (or only one kind is configured);
- a proposer kind is paused when its last ``PAUSE_AFTER`` proposals failed the same way in more than
  one domain (or only one domain is in the mix);
- otherwise the pair (domain, proposer) is paused when its own last ``PAUSE_AFTER`` proposals did.

"The same way" compares the failure's reason with numbers and hex digests blanked out, so seeds,
pids and paths with counters do not make identical crashes look different.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .rundb import UnitRecord

PAUSE_AFTER = 3
"""Identical infrastructure failures in a row that pause a domain, a proposer or their pair."""

_VARYING = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{8,}\b|\d+", re.IGNORECASE)


def signature(reason: str | None) -> str:
    """A failure's reason with what varies between identical failures blanked out."""
    first = (reason or "").strip().splitlines()[0] if (reason or "").strip() else ""
    return _VARYING.sub("#", first)


@dataclass(frozen=True)
class Pauses:
    """What is paused, each with its reason (``3 identical failures: crashed: ...``)."""

    domains: dict[str, str] = field(default_factory=dict)
    proposers: dict[str, str] = field(default_factory=dict)
    pairs: dict[tuple[str, str], str] = field(default_factory=dict)

    def allows(self, domain: str, proposer: str) -> bool:
        return domain not in self.domains and proposer not in self.proposers and (domain, proposer) not in self.pairs

    def proposers_for(self, domain: str, weights: Mapping[str, float]) -> dict[str, float]:
        """``weights`` less the proposer kinds paused for ``domain``."""
        return {k: w for k, w in weights.items() if w > 0 and self.allows(domain, k)}

    def open_domains(self, mix: Mapping[str, float], proposers: Mapping[str, float]) -> dict[str, float]:
        """The domains of ``mix`` that at least one proposer kind may still work on."""
        return {d: w for d, w in mix.items() if w > 0 and self.proposers_for(d, proposers)}

    def lines(self) -> list[str]:
        """One line per pause, for progress lines and summaries."""
        return ([f"domain {d}: {why}" for d, why in sorted(self.domains.items())]
                + [f"proposer {p}: {why}" for p, why in sorted(self.proposers.items())]
                + [f"domain {d} with proposer {p}: {why}" for (d, p), why in sorted(self.pairs.items())])

    def __bool__(self) -> bool:
        return bool(self.domains or self.proposers or self.pairs)


def _same_failure(units: Sequence[UnitRecord]) -> str | None:
    """The shared reason when the last PAUSE_AFTER of ``units`` are identical infrastructure failures."""
    last = units[-PAUSE_AFTER:]
    if len(last) < PAUSE_AFTER or any(u.outcome != "infrastructure" for u in last):
        return None
    if len({signature(u.reason) for u in last}) != 1:
        return None
    reason = (last[-1].reason or "no reason recorded").splitlines()[0][:300]
    return f"{PAUSE_AFTER} identical failures in a row: {reason}"


def pauses(units: Iterable[UnitRecord], *, mix: Mapping[str, float], proposers: Mapping[str, float]) -> Pauses:
    """The pauses that ``units`` (the run's finished proposals) call for."""
    ordered = sorted(units, key=lambda u: (u.round, u.slot))
    by_domain: dict[str, list[UnitRecord]] = defaultdict(list)
    by_proposer: dict[str, list[UnitRecord]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[UnitRecord]] = defaultdict(list)
    for u in ordered:
        by_domain[u.domain].append(u)
        by_proposer[u.proposer].append(u)
        by_pair[(u.domain, u.proposer)].append(u)
    one_kind = sum(1 for w in proposers.values() if w > 0) <= 1
    one_domain = sum(1 for w in mix.values() if w > 0) <= 1
    out = Pauses()
    for domain, rows in by_domain.items():
        why = _same_failure(rows)
        if why and (one_kind or len({u.proposer for u in rows[-PAUSE_AFTER:]}) > 1):
            out.domains[domain] = why
    for kind, rows in by_proposer.items():
        why = _same_failure(rows)
        if why and (one_domain or len({u.domain for u in rows[-PAUSE_AFTER:]}) > 1):
            out.proposers[kind] = why
    for pair, rows in by_pair.items():
        why = _same_failure(rows)
        if why and out.allows(*pair):
            out.pairs[pair] = why
    return out

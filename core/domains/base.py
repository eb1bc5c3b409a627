"""The domain interface: what a domain plugin brings.

A domain generates tasks procedurally (``families``/``generate``), derives variants for the
flywheel (``vary``), ships a proposer kit for LLM proposers (``kit``), may add admission gates
(register them with the gates hook) and says which sandbox backend its tasks need.
"""

from __future__ import annotations

import abc
import random
from pathlib import Path
from typing import Any, ClassVar, Mapping, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ..errors import NoFurtherVariant, UsageError
from ..tasks import Task

DIFFICULTIES = ("easy", "medium", "hard")
DIRECTIONS = ("simpler", "harder", "different")


class Family(BaseModel):
    """A procedural generator family: a kind of task with difficulty parameters."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    skills: list[str] = Field(default_factory=list)


class KitExample(NamedTuple):
    """One worked example of a domain's proposer kit: the generator call that makes it."""

    family: str
    seed: int
    difficulty: str = "medium"
    #: further keyword arguments of the domain's ``generate`` (terminal's ``kind``)
    options: Mapping[str, Any] = {}


class ProposerKit(BaseModel):
    """Package data an LLM proposer reads: a domain guide, worked examples (task directories) and the
    task-directory contract."""

    model_config = ConfigDict(frozen=True)

    guide: str
    contract: str
    examples: list[Path] = Field(default_factory=list)


class Domain(abc.ABC):
    """A family of environments. Subclasses are registered by name through the domains hook."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: the sandbox backend this domain's tasks need by default ("bwrap", "docker", ...)
    sandbox_backend: ClassVar[str] = "bwrap"

    @abc.abstractmethod
    def families(self) -> list[Family]:
        """The procedural generator families of this domain (may be empty)."""

    @abc.abstractmethod
    def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        """A task from ``family``, deterministic given ``seed`` and ``difficulty``."""

    def vary(self, parent: Task, *, direction: str, seed: int) -> Task:
        """A child of ``parent``: simpler, harder, or a different skill. The default regenerates the
        parent's family one difficulty step away (or a neighbouring family for "different")."""
        prov = parent.provenance
        families = [f.name for f in self.families()]
        family = prov.family if prov.family in families else families[0]
        level = DIFFICULTIES.index(prov.difficulty) if prov.difficulty in DIFFICULTIES else 1
        if direction == "simpler":
            level = max(0, level - 1)
        elif direction == "harder":
            level = min(len(DIFFICULTIES) - 1, level + 1)
        elif direction == "different":
            family = families[(families.index(family) + 1) % len(families)]
        else:
            raise ValueError(f"unknown direction {direction!r}; expected one of {DIRECTIONS}")
        child = self.generate(family, seed=seed, difficulty=DIFFICULTIES[level])
        return child.with_provenance(parent=parent.name, direction=direction)

    # Async forms, for domains whose generators wait on processes (a test suite run in a sandbox): the
    # flywheel awaits these, so such a domain overrides them and keeps the event loop free. The
    # defaults call the plain methods.
    async def agenerate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        """``generate``, awaitable."""
        return self.generate(family, seed=seed, difficulty=difficulty)

    async def avary(self, parent: Task, *, direction: str, seed: int) -> Task:
        """``vary``, awaitable."""
        return self.vary(parent, direction=direction, seed=seed)

    def family_info(self, family: str) -> dict[str, Any]:
        """Fields of ``family`` beyond name, description and skills, for ``<domain> families``
        (a levelled domain adds its neighbour; terminal its kinds; computer_use its app)."""
        return {}

    #: the worked examples of the proposer kit, made from the domain's own generators on first use
    kit_examples: ClassVar[tuple[KitExample, ...]] = ()

    def kit(self) -> ProposerKit | None:
        """The proposer kit for LLM proposers, or None when the domain has none. The default reads
        ``kit/guide.md`` and ``kit/contract.md`` from the domain's package and generates
        ``kit_examples`` once per version of the code (see ``autoenvscaling.domains.kit``)."""
        from .kit import domain_kit

        return domain_kit(self)

    def kit_tasks(self) -> list[Task]:
        """The kit's worked examples as generated now. Override to generate them another way (a
        published secret, another strategy); the kit caches what this returns."""
        return [self.generate(e.family, seed=e.seed, difficulty=e.difficulty, **dict(e.options))
                for e in self.kit_examples]

    def redteam_tested(self, task: Task) -> bool:
        """Whether the red-team gate may leave ``task`` alone: only when it is exactly what one of
        this domain's procedural families generates from its recorded seed and parameters (check with
        ``same_task_content`` against a regenerated twin: a proposer cannot claim it by writing the
        provenance) and that family's own tests red-team its verifier. Default: never."""
        return False


def same_task_content(task: Task, twin: Task) -> bool:
    """Whether ``task`` has ``twin``'s instruction, every one of its files (environment, tests,
    solution), byte for byte and nothing more, and its task.toml: only the name and the provenance
    may differ (the flywheel renames its tasks and stamps their provenance). A changed setting (a
    verifier's environment, a timeout, an artifact) is a different task."""
    return (task.instruction == twin.instruction and task.files == twin.files
            and _settings(task) == _settings(twin))


#: per domain, the content digests (``content_digest``) of the tasks its generators made in this process
_MADE_HERE: dict[str, set[str]] = {}


def content_digest(task: Task) -> str:
    """``sha256:<hex>`` over what ``same_task_content`` compares: the instruction, every file and
    task.toml less the name and the provenance."""
    import hashlib
    import json

    h = hashlib.sha256(json.dumps(_settings(task), sort_keys=True).encode())
    h.update(b"\0" + (task.instruction or "").encode())
    for path, f in sorted(task.files.items()):
        h.update(b"\0" + path.encode() + (b"x" if f.executable else b"-") + len(f.data).to_bytes(8, "big") + f.data)
    return "sha256:" + h.hexdigest()


def remember_generated(domain: str, task: Task) -> Task:
    """Record that ``domain``'s own generator made ``task`` in this process (for a domain whose
    ``redteam_tested`` cannot afford to regenerate a task: see ``generated_here``). Returns ``task``."""
    _MADE_HERE.setdefault(domain, set()).add(content_digest(task))
    return task


def generated_here(domain: str, task: Task) -> bool:
    """Whether ``domain``'s generator made ``task`` (its content; the name and provenance may
    differ) in this process. Nothing outside the process can add to the record: a task read from
    disk, sent by a proposer or made by another process is not in it unless this process made the
    same content."""
    return content_digest(task) in _MADE_HERE.get(domain, ())


def _settings(task: Task) -> dict[str, Any]:
    """task.toml as data, less the task's name and our provenance."""
    from ..tasks import PROVENANCE_KEY

    data = task.config.model_dump(mode="json")
    data["task"] = {k: v for k, v in data.get("task", {}).items() if k != "name"}
    data["metadata"] = {k: v for k, v in data.get("metadata", {}).items() if k != PROVENANCE_KEY}
    return data


class LevelledDomain(Domain):
    """A domain whose families are built at a numeric level (easy 1, medium 2, hard 3; variations may
    step out to ``min_level``..``max_level``) and name a neighbouring family each. Subclasses give
    ``generate_level`` (or, without options, ``build_task``) and a ``catalog`` (or ``families`` and
    ``neighbour``); ``generate`` maps a difficulty to its level, and ``vary``
    steps one level or moves to the neighbour at the same level, recording the parent. Keyword
    options of ``generate`` (terminal's ``kind``) pass through to ``generate_level``; ``vary_options``
    says which of a parent's a child keeps, ``vary_origin`` where a parent stands, and ``floor_family``
    is what "simpler" reaches below a family's lowest level.

    A domain whose generators wait on processes (swe screens each bug in a sandbox) overrides
    ``agenerate_level`` with the real generator and makes ``generate_level`` run it to completion;
    ``agenerate`` and ``avary`` await it, ``generate`` and ``vary`` call ``generate_level``."""

    levels: ClassVar[dict[str, int]] = {"easy": 1, "medium": 2, "hard": 3}
    min_level: ClassVar[int] = 1
    max_level: ClassVar[int] = 3
    #: the family "simpler" moves to from another family's ``min_level`` (None: nothing is simpler)
    floor_family: ClassVar[str | None] = None
    #: the families by name, each with ``name``, ``description``, ``skills`` and ``neighbour`` (a
    #: plugin's catalog): ``families`` and ``neighbour`` read it unless a subclass overrides them
    catalog: ClassVar[Mapping[str, Any]] = {}
    #: the families whose own tests run the red-team gate's every cheat on their tasks, unvouched
    #: (``autoenvscaling.testing.assert_red_team_holds``): the default ``redteam_tested`` vouches for
    #: what they generate
    redteam_tested_families: ClassVar[frozenset[str]] = frozenset()

    def redteam_tested(self, task: Task) -> bool:
        """A task of a ``redteam_tested_families`` family, byte for byte what ``generate_level``
        makes from its recorded seed and level (no options): the red-team gate's cheats were run on
        that family's verifier by its tests, and a seed changes the data, not the verifier. A forged
        provenance or an edited file regenerates nothing equal, and the gate judges the task."""
        prov = task.provenance
        if (prov.domain != self.name or prov.family not in self.redteam_tested_families or prov.seed is None
                or "level" not in prov.parameters):
            return False
        try:
            twin = self.generate_level(prov.family, seed=int(prov.seed), level=int(prov.parameters["level"]))
        except (UsageError, ValueError, TypeError):
            return False
        return same_task_content(task, twin)

    def generate_level(self, family: str, *, seed: int, level: int, **options: Any) -> Task:
        """A task of ``family`` at ``level``, deterministic given ``seed`` (and the options). The
        default serves a domain without options: it checks the request (``check_request``), then
        ``build_task`` makes the task from the family's random source (``level_rng``)."""
        self.check_request(family, level, options)
        return self.build_task(family, self.level_rng(family, seed, level), seed=seed, level=level)

    def build_task(self, family: str, rng: random.Random, *, seed: int, level: int) -> Task:
        """The task the default ``generate_level`` returns: ``family``'s generator draws it from
        ``rng`` at ``level``, and the domain renders it (``seed`` and ``level`` name it)."""
        raise NotImplementedError(f"{type(self).__name__} gives neither generate_level nor build_task")

    def level_rng(self, family: str, seed: int, level: int) -> random.Random:
        """The random source of a family's generator for (``seed``, ``level``), seeded with
        "autoenvscaling-<domain name, dashed>/<family>/<seed>/<level>". ``random.Random`` hashes a
        string seed with SHA-512: the same draws across runs and machines."""
        return random.Random(f"autoenvscaling-{self.name.replace('_', '-')}/{family}/{seed}/{level}")

    def families(self) -> list[Family]:
        return [Family(name=f.name, description=f.description, skills=list(f.skills)) for f in self.catalog.values()]

    def neighbour(self, family: str) -> str:
        """The family a "different" variation of a ``family`` task comes from (the catalog's
        neighbour; the family itself when that is not in the catalog)."""
        neighbour = self.catalog[family].neighbour
        return neighbour if neighbour in self.catalog else family

    async def agenerate_level(self, family: str, *, seed: int, level: int, **options: Any) -> Task:
        """``generate_level``, awaitable (the default calls it)."""
        return self.generate_level(family, seed=seed, level=level, **options)

    def generate(self, family: str, *, seed: int, difficulty: str = "medium", **options: Any) -> Task:
        """A task of ``family``; the same (family, seed, difficulty, options) always gives the same task."""
        return self.generate_level(family, seed=seed, level=self.level_of(difficulty), **options)

    async def agenerate(self, family: str, *, seed: int, difficulty: str = "medium", **options: Any) -> Task:
        return await self.agenerate_level(family, seed=seed, level=self.level_of(difficulty), **options)

    def level_of(self, difficulty: str) -> int:
        """The level of a difficulty label."""
        if difficulty not in self.levels:
            raise UsageError(f"unknown difficulty {difficulty!r}", hint=f"use one of {', '.join(self.levels)}")
        return self.levels[difficulty]

    def family_info(self, family: str) -> dict[str, Any]:
        return {"neighbour": self.neighbour(family)}

    def check_level(self, level: int) -> None:
        if not self.min_level <= level <= self.max_level:
            raise UsageError(f"level {level} is out of range", hint=f"use {self.min_level}..{self.max_level}")

    def check_request(self, family: str, level: int, options: Mapping[str, Any]) -> None:
        """What ``generate_level`` of a domain without options checks first, in this order: no
        options given, the level in range, the family in the catalog (each a UsageError)."""
        if options:
            raise UsageError(f"{self.name} takes no generation options (got {', '.join(sorted(options))})")
        self.check_level(level)
        if family not in self.catalog:
            raise UsageError(f"unknown {self.name} family {family!r}", hint=f"families: {', '.join(self.catalog)}")

    def vary_options(self, parent: Task, *, same_family: bool) -> dict[str, Any]:
        """The ``generate_level`` options a child of ``parent`` keeps (default: none)."""
        return {}

    def vary_origin(self, parent: Task) -> tuple[str, int] | None:
        """The family and level a variation of ``parent`` steps from; None leaves the variation to
        ``Domain.vary``. Default: a task of this domain's families that records its level."""
        prov = parent.provenance
        if (prov.domain != self.name or prov.family not in {f.name for f in self.families()}
                or "level" not in prov.parameters):
            return None
        return prov.family, int(prov.parameters["level"])

    def vary(self, parent: Task, *, direction: str, seed: int) -> Task:
        step = self._vary_step(parent, direction)
        if step is None:
            return super().vary(parent, direction=direction, seed=seed)
        family, level, options = step
        child = self.generate_level(family, seed=seed, level=level, **options)
        return child.with_provenance(parent=parent.name, direction=direction)

    async def avary(self, parent: Task, *, direction: str, seed: int) -> Task:
        step = self._vary_step(parent, direction)
        if step is None:
            return await super().avary(parent, direction=direction, seed=seed)
        family, level, options = step
        child = await self.agenerate_level(family, seed=seed, level=level, **options)
        return child.with_provenance(parent=parent.name, direction=direction)

    def _vary_step(self, parent: Task, direction: str) -> tuple[str, int, dict[str, Any]] | None:
        """The child's family, level and ``generate_level`` options (None: see ``vary_origin``)."""
        if direction not in DIRECTIONS:
            raise UsageError(f"unknown direction {direction!r}", hint=f"use one of {', '.join(DIRECTIONS)}")
        origin = self.vary_origin(parent)
        if origin is None:
            return None
        family, level = origin
        start = family
        if direction == "different":
            family = self.neighbour(family)
        elif (direction == "simpler" and level == self.min_level and self.floor_family is not None
              and family != self.floor_family):
            family = self.floor_family  # below a family's simplest task: the family it builds on
        else:
            level += 1 if direction == "harder" else -1
            if not self.min_level <= level <= self.max_level:
                edge = "hardest" if direction == "harder" else "simplest"
                raise NoFurtherVariant(f"{parent.name} is already the {edge} variant",
                                       hint="vary it with direction='different'")
        return family, level, self.vary_options(parent, same_family=family == start)

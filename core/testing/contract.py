"""The domain contract: what every domain promises, checked on the domain itself.

Any domain plugin runs ``assert_domain_contract(MyDomain())`` in its own tests. The check is
black-box: it only calls the ``Domain`` interface and the core's own task IO, lint gate and
validation pipeline, so a domain that passes here behaves the way the flywheel expects. It returns
every problem it finds (not just the first) so one run shows an author all that is wrong.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path
from typing import Any, Sequence

from ..domains.base import DIFFICULTIES, DIRECTIONS, Domain
from ..errors import AESError
from ..gates.base import GateContext, GateSettings
from ..tasks import Task, read_task, write_task

# Gates 1-6 (docs/architecture.md, Admission gates) and the red team: what a generated task must
# pass without a solver or a suite.
RUNTIME_GATES = ("lint", "build", "oracle", "null", "redteam", "reset", "flaky")
_FAMILY_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,62}$")


def check_domain_contract(domain: Domain, *, backend: Any = None, seeds: Sequence[int] = (0, 1),
                          difficulties: Sequence[str] = DIFFICULTIES, run_gates: bool = True,
                          host: Any = None) -> list[str]:
    """Problems found in ``domain`` (empty = the contract holds). Synchronous; from async code use
    ``acheck_domain_contract``.

    ``backend``: a SandboxBackend; when given (and ``run_gates``), every family x difficulty task must
    pass gates 1-6 and the red team through the validation pipeline. ``seeds``: at least two; the first is used for
    the per-difficulty checks, the pair for "different seeds give different tasks". ``host``: the
    plugin host whose gates are used (default: a fresh strict host with the built-ins).
    """
    return asyncio.run(acheck_domain_contract(domain, backend=backend, seeds=seeds, difficulties=difficulties,
                                              run_gates=run_gates, host=host))


def assert_domain_contract(domain: Domain, **kwargs: Any) -> None:
    """``check_domain_contract`` as an assertion listing every problem."""
    problems = check_domain_contract(domain, **kwargs)
    if problems:
        raise AssertionError(f"domain {getattr(domain, 'name', domain)!r} breaks the contract:\n  - "
                             + "\n  - ".join(problems))


async def acheck_domain_contract(domain: Domain, *, backend: Any = None, seeds: Sequence[int] = (0, 1),
                                 difficulties: Sequence[str] = DIFFICULTIES, run_gates: bool = True,
                                 host: Any = None) -> list[str]:
    """The async form of ``check_domain_contract``."""
    if len(seeds) < 2 or len(set(seeds)) < 2:
        raise ValueError("check_domain_contract needs at least two different seeds")
    problems: list[str] = []
    name = getattr(domain, "name", None)
    if not isinstance(name, str) or not name:
        problems.append("the domain class has no `name`")
    families = _families(domain, problems)
    if host is None:
        from ..plugins.host import PluginHost

        host = PluginHost(strict=True)
        host.load_builtins()
    validator = _validator(backend, host) if backend is not None and run_gates else None
    for family in families:
        await _check_family(domain, family, seeds, difficulties, validator, host, problems)
    return problems


def _families(domain: Domain, problems: list[str]) -> list[str]:
    try:
        families = domain.families()
    except Exception as exc:
        problems.append(f"families() raised {type(exc).__name__}: {exc}")
        return []
    if not families:
        problems.append("families() is empty: a domain needs at least one generator family")
    names = [f.name for f in families]
    for family in families:
        if not _FAMILY_NAME.match(family.name):
            problems.append(f"family name {family.name!r} is not lowercase letters, digits, '_', '-' or '.'")
        if not family.description.strip():
            problems.append(f"family {family.name!r} has no description")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"family names repeat: {', '.join(duplicates)}")
    return list(dict.fromkeys(names))


async def _check_family(domain: Domain, family: str, seeds: Sequence[int], difficulties: Sequence[str],
                        validator: Any, host: Any, problems: list[str]) -> None:
    where = f"family {family!r}"
    first = _generate(domain, family, seeds[0], difficulties[0], problems)
    if first is None:
        return  # one report per broken family is enough
    again = _generate(domain, family, seeds[0], difficulties[0], problems)
    other = _generate(domain, family, seeds[1], difficulties[0], problems)
    if again is None or other is None:
        return
    if first != again or first.digest() != again.digest():
        problems.append(f"{where}: generate() is not deterministic: seed {seeds[0]} gave two different tasks")
    # Compared without the config: a domain that only records the seed in its provenance still
    # generates the same task for every seed.
    if (first.instruction, first.files) == (other.instruction, other.files):
        problems.append(f"{where}: seeds {seeds[0]} and {seeds[1]} gave the same task (instruction and files)")
    for difficulty in difficulties:
        task = first if difficulty == difficulties[0] else _generate(domain, family, seeds[0], difficulty, problems)
        if task is None:
            continue
        label = f"{where} ({difficulty}, seed {seeds[0]}) task {task.name!r}"
        problems.extend(f"{label}: {p}" for p in _check_task(domain, task, family, seeds[0], difficulty))
        problems.extend(f"{label}: {p}" for p in await _lint(task, host))
        if validator is not None:
            problems.extend(f"{label}: {p}" for p in await _validate(task, validator))
    problems.extend(f"{where}: {p}" for p in _check_vary(domain, first, seeds[1]))


def _generate(domain: Domain, family: str, seed: int, difficulty: str, problems: list[str]) -> Task | None:
    try:
        task = domain.generate(family, seed=seed, difficulty=difficulty)
    except Exception as exc:
        problems.append(f"family {family!r}: generate(seed={seed}, difficulty={difficulty!r}) raised "
                        f"{type(exc).__name__}: {exc}")
        return None
    if not isinstance(task, Task):
        problems.append(f"family {family!r}: generate() returned {type(task).__name__}, not a Task")
        return None
    return task


def _check_task(domain: Domain, task: Task, family: str, seed: int, difficulty: str) -> list[str]:
    """Provenance and a lossless write/read round trip."""
    out = []
    prov = task.provenance
    expected = {"domain": getattr(domain, "name", None), "family": family, "seed": seed, "difficulty": difficulty}
    for key, value in expected.items():
        if getattr(prov, key) != value:
            out.append(f"[metadata.autoenvscaling] {key} is {getattr(prov, key)!r}, expected {value!r}")
    with tempfile.TemporaryDirectory(prefix="aes-contract-") as tmp:
        try:
            back = read_task(write_task(task, Path(tmp) / "task"))
        except AESError as exc:
            return out + [f"write/read round trip failed: {exc.message}"]
    if back != task:
        changed = sorted(set(back.files) ^ set(task.files)) or [
            p for p in task.files if back.files.get(p) != task.files[p]]
        detail = f"files differ: {', '.join(changed[:5])}" if changed else "config or instruction differ"
        out.append(f"write_task/read_task does not round-trip ({detail})")
    elif back.digest() != task.digest():
        out.append("the digest changes after a write/read round trip")
    return out


async def _lint(task: Task, host: Any) -> list[str]:
    try:
        gate = host.gates.get("lint")()
    except AESError as exc:
        return [f"the lint gate is unavailable: {exc.message}"]
    ctx = GateContext(backend=None, runner=None, settings=GateSettings())
    result = await gate.check(task, ctx)
    return [] if result.passed else [f"lint gate: {result.status}: {result.reason}"]


def _validator(backend: Any, host: Any) -> Any:
    """One validator for the whole check (it builds the trial runner and verifier runtime once),
    running only gates 1-6 and the red team."""
    from ..gates.validate import Validator

    settings = GateSettings(skip=tuple(n for n in host.gates.names() if n not in RUNTIME_GATES))
    return Validator(host=host, backend=backend, settings=settings)


async def _validate(task: Task, validator: Any) -> list[str]:
    """Gates 1-6 and the red team through the core's validation pipeline."""
    report = await validator.validate(task)
    out = [] if report.valid else [f"validation: {report.status}: {report.reason}"]
    ran = {g.name: g.status for g in report.gates}
    missing = [g for g in RUNTIME_GATES if ran.get(g) != "pass"]
    if report.valid and missing:
        out.append(f"validation passed without running gates: {', '.join(missing)}")
    return out


def _check_vary(domain: Domain, parent: Task, seed: int) -> list[str]:
    out = []
    for direction in DIRECTIONS:
        try:
            child = domain.vary(parent, direction=direction, seed=seed)
        except Exception as exc:
            out.append(f"vary(direction={direction!r}) raised {type(exc).__name__}: {exc}")
            continue
        if not isinstance(child, Task):
            out.append(f"vary(direction={direction!r}) returned {type(child).__name__}, not a Task")
            continue
        prov = child.provenance
        if prov.parent != parent.name:
            out.append(f"vary(direction={direction!r}): child's parent is {prov.parent!r}, expected {parent.name!r}")
        if prov.direction != direction:
            out.append(f"vary(direction={direction!r}): child's direction is {prov.direction!r}")
        if child.digest() == parent.digest():
            out.append(f"vary(direction={direction!r}) returned the parent unchanged")
    return out

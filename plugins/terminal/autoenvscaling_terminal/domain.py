"""``TerminalDomain``: the terminal domain's generators, variation operators and proposer kit."""

from __future__ import annotations

from typing import Any

from autoenvscaling.api import KitExample, LevelledDomain, Task, UsageError, same_task_content

from .families import CATALOG, load
from .families.base import MAX_LEVEL, MIN_LEVEL, choose_kind

FLOOR = "basics"  # the family every other one builds on: what "simpler" reaches below level 0


# Families whose own tests red-team their verifiers in place of the red-team gate (Domain.redteam_tested):
# every one. basics is attacked in tests/test_redteam.py (the gate's blind cheats *are* some of its
# steps); tests/test_redteam.py runs the gate's every cheat on every kind of the others, unvouched.
REDTEAM_TESTED = frozenset(CATALOG)


class TerminalDomain(LevelledDomain):
    """Shell tasks in a Debian sandbox: files, logs, data, text, scripts, archives, SQLite, git,
    configuration, cron schedules and processes, over a floor of one-command basics. Thirteen
    procedural families, no LLM."""

    name = "terminal"
    description = "procedural shell tasks (basics, files, logs, data, text, scripts, archives, SQLite, git, config, cron, processes)"
    catalog = CATALOG
    redteam_tested_families = REDTEAM_TESTED
    min_level, max_level, floor_family = MIN_LEVEL, MAX_LEVEL, FLOOR
    kit_examples = (KitExample("log_analysis", 3, "medium", {"kind": "app_errors"}),
                    KitExample("git_ops", 5, "hard", {"kind": "restore_file"}),
                    KitExample("shell_script", 2, "easy", {"kind": "stats"}))

    def family_info(self, family: str) -> dict[str, Any]:
        return {"kinds": self.kinds(family), **super().family_info(family)}

    def kinds(self, family: str) -> list[str]:
        """The task types of ``family`` (a generator picks one per seed unless told)."""
        return [k.name for k in self._module(family).KINDS]

    def generate_level(self, family: str, *, seed: int, level: int, kind: str | None = None,
                       reward_mode: str = "fraction", **options: Any) -> Task:
        """A task of ``family`` at ``level`` (easy 1, medium 2, hard 3; 0 to 6 reachable by variation);
        the same (family, seed, level, kind) always gives the same task. ``reward_mode`` "binary"
        rewards 1 only when every check passes (default: fraction passed). There are no other options."""
        from .render import REWARD_MODES, render

        if options:
            raise UsageError(f"unknown terminal generation options: {', '.join(sorted(options))}", hint="the options are kind and reward_mode")
        self.check_level(level)
        if reward_mode not in REWARD_MODES:
            raise UsageError(f"unknown reward mode {reward_mode!r}", hint="use 'fraction' or 'binary'")
        module = self._module(family)
        if kind is not None and kind not in [k.name for k in module.KINDS]:
            raise UsageError(f"family {family} has no kind {kind!r}", hint=f"kinds: {', '.join(self.kinds(family))}")
        rng = self.level_rng(family, seed, level)
        draft = choose_kind(module.KINDS, rng, level, kind).build(rng, level)
        return render(family, draft, seed=seed, level=level, reward_mode=reward_mode)

    def redteam_tested(self, task: Task) -> bool:
        """Generated tasks leave the core's red-team gate alone: tests/test_redteam.py runs the gate's
        every cheat on every kind of every family but basics, unvouched, and attacks basics' verifier
        instead (a basics step *is* "copy this file" or "create an empty file", which the generic
        cheats do blindly). Only a task identical to the one its family generates from its recorded
        seed, level, kind and reward mode qualifies."""
        prov = task.provenance
        params = prov.parameters
        if prov.domain != self.name or prov.family not in self.redteam_tested_families or prov.seed is None or "level" not in params:
            return False
        for kind in (None, params.get("kind")):
            try:
                twin = self.generate_level(prov.family, seed=int(prov.seed), level=int(params["level"]), kind=kind,
                                           reward_mode=str(params.get("reward_mode", "fraction")))
            except (UsageError, ValueError, TypeError):
                return False
            if same_task_content(task, twin):
                return True
        return False

    def vary_options(self, parent: Task, *, same_family: bool) -> dict[str, Any]:
        """A child one level simpler or harder keeps the family's kind (measurably less or more data
        and steps); every child keeps the reward mode. Simpler than a family's level 0 is the basics
        family's level 0 (one command); nothing is simpler than that."""
        params = parent.provenance.parameters
        kept = {"reward_mode": params.get("reward_mode", "fraction")}
        return {**kept, "kind": params.get("kind")} if same_family else kept

    @staticmethod
    def _module(family: str):  # noqa: ANN205 - a generator module
        try:
            return load(family)
        except KeyError:
            raise UsageError(f"unknown terminal family {family!r}", hint=f"families: {', '.join(CATALOG)}") from None

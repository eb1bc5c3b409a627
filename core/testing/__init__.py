"""The plugin author's kit: a pytest plugin with fixtures, a toy domain, and the domain contract.

pytest loads ``autoenvscaling.testing.pytest_plugin`` in every project where autoenvscaling is
installed, so this package imports nothing until a name is used.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "check_domain_contract": "contract",
    "acheck_domain_contract": "contract",
    "assert_domain_contract": "contract",
    "ToyDomain": "toy",
    "ScriptedAgent": "agents",
    "run_trial": "runs",
    "validate_task": "runs",
    "check_cheat": "redteam",
    "run_cheat": "redteam",
    "assert_red_team_holds": "redteam",
    "judge_unvouched": "redteam",
    "assert_vouched_only_as_generated": "redteam",
    "red_team_cases": "redteam",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)

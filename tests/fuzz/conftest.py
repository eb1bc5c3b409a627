"""Fuzzing what comes from outside (hypothesis): budgets, the ``fuzz`` fixture and the case counts.

Every fuzz test runs twice over: ``[fast]`` with a small, derandomized budget in the fast set (what CI
runs on every change), and ``[full]`` with the full budget, marked ``slow`` (``PYTEST_MARKERS=slow
bash scripts/test.sh``), randomized so each run explores new cases. Neither writes a hypothesis
database (no ``.hypothesis`` folder in the checkout) nor has a deadline (the machine is shared).

    def test_reading(fuzz: Fuzz, tmp_path: Path) -> None:
        @fuzz.given(st.binary())
        def check(data: bytes) -> None:
            ...

        check()

Each property counts the cases it ran; ``tests/conftest.py`` adds them up over the session (xdist
workers included) and prints ``fuzz: N cases run over M properties, K crashes``.
"""

from __future__ import annotations

import functools
import os
import tempfile
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

#: cases per property in the fast set, and in the full budget (slow set); a property may ask for fewer
FAST_EXAMPLES = 20
FULL_EXAMPLES = 1000
TALLY_ENV = "AUTOENVSCALING_FUZZ_TALLY"  # the session's tally file (tests/conftest.py creates it)
# Hypothesis keeps caches (constants, Unicode tables) in ./.hypothesis unless told otherwise: not in the checkout.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "aes-hypothesis"))

_COMMON: dict[str, Any] = {"deadline": None, "database": None,
                           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                                     HealthCheck.large_base_example, HealthCheck.filter_too_much]}
settings.register_profile("aes-fuzz-fast", derandomize=True, print_blob=False, **_COMMON)
settings.register_profile("aes-fuzz-full", derandomize=False, print_blob=True, **_COMMON)

_FAILED = pytest.StashKey[bool]()


class Fuzz:
    """One fuzz test's budget ("fast" or "full") and the cases its properties ran."""

    def __init__(self, budget: str) -> None:
        self.budget = budget
        self.cases = 0

    def given(self, *strategies: SearchStrategy[Any], fast: int = FAST_EXAMPLES,
              full: int = FULL_EXAMPLES) -> Callable[[Callable[..., None]], Callable[[], None]]:
        """``hypothesis.given`` under this test's budget: ``fast`` cases in the fast set, ``full`` in
        the slow one. Every case the property runs is counted."""
        profile = settings.get_profile(f"aes-fuzz-{self.budget}")
        examples = fast if self.budget == "fast" else full

        def decorate(check: Callable[..., None]) -> Callable[[], None]:
            @functools.wraps(check)
            def counted(*args: Any, **kwargs: Any) -> None:
                self.cases += 1
                check(*args, **kwargs)

            return settings(profile, max_examples=examples)(given(*strategies)(counted))

        return decorate


@pytest.fixture(params=[pytest.param("fast"), pytest.param("full", marks=pytest.mark.slow)])
def fuzz(request: pytest.FixtureRequest) -> Iterator[Fuzz]:
    state = Fuzz(request.param)
    yield state
    path = os.environ.get(TALLY_ENV)
    if path:  # one short line per property, appended (atomic for lines this short, across workers)
        failed = request.node.stash.get(_FAILED, False)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{request.node.nodeid}\t{state.cases}\t{int(failed)}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Remember whether the property failed (a crash), for the fixture's line in the tally."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[_FAILED] = report.failed

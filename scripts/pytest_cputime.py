"""A pytest plugin that records each test's CPU time and wall time, to find what keeps the cores busy.

CPU is this process's and its waited-for children's (subprocesses, bubblewrap sandboxes and what ran in
them); a daemon the test did not wait for (podman's service, Ray, an executor's workers still running)
is not in it, so a test much longer than its CPU is waiting on one of those, on a timeout, or on a
sleep. One line per test, ``CPU<TAB>WALL<TAB>NODE ID<TAB>START<TAB>WORKER`` (seconds; START is the
epoch time the test began, WORKER the xdist worker that ran it), is appended to $PYTEST_CPUTIME_OUT
(default ./cputime.tsv), from every xdist worker:

    PYTHONPATH=scripts PYTEST_CPUTIME_OUT=/tmp/cpu.tsv bash scripts/test.sh -p pytest_cputime
    sort -rn /tmp/cpu.tsv | head -30                                  # the most CPU
    awk -F'\t' '{print $2 - $1 "\t" $3}' /tmp/cpu.tsv | sort -rn | head  # the most waiting
    sort -t$'\t' -k4 -n /tmp/cpu.tsv | tail -20     # what ran last: the run's tail, worker by worker
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any, Iterator

import pytest


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    began, wall, cpu = time.time(), time.monotonic(), _cpu()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.environ.get("PYTEST_CPUTIME_OUT", "cputime.tsv"), "a") as out:
        out.write(f"{_cpu() - cpu:.2f}\t{time.monotonic() - wall:.2f}\t{item.nodeid}\t{began:.2f}\t{worker}\n")

"""Verifier tampering on bwrap: the shared attacks and controls (tamper_suite.py), plus what only
bwrap has: changes read from the overlay on the host, restores that refuse a redirected parent, and
the fallback for a backend that cannot report changes (docs/verification.md)."""

from __future__ import annotations

import asyncio

import pytest

from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.testing import ScriptedAgent

from .tamper_suite import *  # noqa: F403 - the shared tampering tests, run on this backend

PYTEST_PKG = "/usr/lib/python3/dist-packages/pytest"


@pytest.fixture(scope="module")
def tamper_backend(backend):
    return backend


@pytest.fixture
def entrypoint_fixture():
    return "entrypoint-service"


def test_changes_are_read_from_the_host_and_restores_refuse_a_redirected_parent(backend, suite):
    """changes() sees through nothing the agent planted (a 3000-deep tree, symlinks), and a restore
    whose parent the agent made a symlink is refused instead of following it."""
    from autoenvscaling.errors import SandboxError

    async def go():
        sandbox = await backend.create(suite["protected"], suite["prepared"])
        async with sandbox:
            deep = "/".join(["d"] * 3000)  # 6000 characters: past PATH_MAX
            await sandbox.exec(f"cd /tmp && mkdir -p {deep} && ln -s /usr/bin /app/l && rm -rf {PYTEST_PKG} "
                               f"&& mkdir {PYTEST_PKG} && echo x > {PYTEST_PKG}/new", timeout=60)
            changes = {c.path: c for c in await sandbox.changes()}
            with pytest.raises(SandboxError, match="redirected"):
                await sandbox.restore(["/app/l/sort"])
            await sandbox.restore([PYTEST_PKG])
            after = await sandbox.exec(f"ls {PYTEST_PKG}; [ -e {PYTEST_PKG}/new ] || echo gone; "
                                       "/usr/bin/sort --version | head -1")
            return changes, after

    changes, after = asyncio.run(go())
    assert sum(p.startswith("/tmp/d") for p in changes) == 3000
    assert changes["/app/l"].kind == "added" and not changes["/app/l"].is_dir
    replaced = changes[PYTEST_PKG]
    assert replaced.kind == "modified" and replaced.is_dir and replaced.replaced  # an opaque directory
    assert "__init__.py" in after.stdout and "gone" in after.stdout and "coreutils" in after.stdout


def test_a_backend_without_changes_verifies_with_view_agent_and_says_so(bwrap_cls, suite):
    """A backend whose sandboxes cannot report changes (a third-party one) is never silently trusted:
    the verifier sees the agent's filesystem and the result says so."""
    from autoenvscaling.sandbox.bwrap import BwrapSandbox

    class PlainSandbox(BwrapSandbox):
        verifier_view = False

    class PlainBackend(bwrap_cls):
        async def create(self, task, prepared):
            return PlainSandbox(task, prepared, self.policy)

    runner = TrialRunner(PlainBackend(policy=suite["runner"].backend.policy))
    result = asyncio.run(runner.run(suite["protected"], ScriptedAgent(*suite["attacks"]["pytest"]),
                                    prepared=suite["prepared"]))
    verifier = result.steps[-1].verifier
    assert result.reward == 1.0 and verifier.view == "agent"
    assert "cannot report an attempt's changes" in verifier.view_summary()

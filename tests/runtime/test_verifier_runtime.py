"""Verifier runtimes: registered through the plugin hook, chosen per task and context, materialised
once on the host, and present for the verifier's command alone, read-only (real bubblewrap)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from autoenvscaling.plugins import create_host
from autoenvscaling.plugins.hookspecs import hookimpl
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.runtime.verifier_runtime import (OfflineRuntime, RuntimeContext, RuntimeEnv, VerifierRuntime,
                                                     materialise_files, task_domain)
from autoenvscaling.agents.builtin import NopAgent
from autoenvscaling.tasks import Task

MOUNT = "/opt/autoenvscaling-verifier/probe"


class ProbeRuntime(VerifierRuntime):
    """A domain's runtime: one tool for the probe domain's verifiers."""

    name = "probe"

    def applies(self, task: Task, context: RuntimeContext) -> bool:
        return task_domain(task) == "probe"

    def materialise(self) -> Path:
        return materialise_files({"bin/probe-tool": (b"#!/bin/sh\necho probe ok\n", True)}, self.name, self.cache_dir)

    def environment(self, mount: str) -> RuntimeEnv:
        return RuntimeEnv(path_prefix=(f"{mount}/bin",), env={"PROBE_HOME": mount})


class ProbePlugin:
    @hookimpl
    def autoenvscaling_register_verifier_runtimes(self, registrar):  # noqa: ANN001 - hook signature
        registrar.add("probe", ProbeRuntime)


# Reward 1 only when the tool runs from the read-only mount and the variables are set.
TEST_SH = f"""#!/bin/bash
out=$(probe-tool) && [ "$out" = "probe ok" ] && [ "$PROBE_HOME" = {MOUNT} ] \\
  && ! touch {MOUNT}/planted 2>/dev/null && [ "$AUTOENVSCALING_OFFLINE" = 1 ] \\
  && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
"""


def probe_task(domain: str | None) -> Task:
    metadata = {"autoenvscaling": {"domain": domain}} if domain else {}
    return Task.create(f"probe-{domain}", {"metadata": metadata}, "nothing to do",
                       {"environment/Dockerfile": "FROM debian:bookworm\n", "tests/test.sh": TEST_SH})


def test_offline_is_a_registered_runtime_like_any_other():
    host = create_host(entrypoints=False)
    assert "offline" in host.verifier_runtimes.names()
    runtime = host.verifier_runtimes.get("offline")()
    assert isinstance(runtime, OfflineRuntime) and runtime.mount == "/opt/autoenvscaling-verifier/offline"
    task = probe_task(None)
    assert runtime.applies(task, RuntimeContext(offline=True, backend="bwrap"))
    assert not runtime.applies(task, RuntimeContext(offline=False, backend="bwrap"))
    assert runtime.environment(runtime.mount).path_prefix == ("/opt/autoenvscaling-verifier/offline/bin",)


def test_materialised_files_are_content_addressed_and_world_readable(tmp_path):
    first = materialise_files({"bin/t": (b"#!/bin/sh\n", True), "data/x.json": (b"{}", False)}, "t", tmp_path)
    assert materialise_files({"bin/t": (b"#!/bin/sh\n", True), "data/x.json": (b"{}", False)}, "t", tmp_path) == first
    assert materialise_files({"bin/t": (b"#!/bin/sh\necho\n", True)}, "t", tmp_path) != first
    assert stat.S_IMODE((first / "bin/t").stat().st_mode) == 0o755
    assert stat.S_IMODE((first / "data/x.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((first / "data").stat().st_mode) == 0o755
    with pytest.raises(ValueError, match="unsafe"):
        materialise_files({"../escape": (b"", False)}, "t", tmp_path)


def test_the_same_files_are_hashed_once_and_changed_files_again(tmp_path, monkeypatch):
    """A runtime is materialised for every verification: the same bytes are not hashed twice, while
    a changed file, mode or path (a new dict, or the same dict edited) gets its own directory."""
    from autoenvscaling.runtime import verifier_runtime

    hashed: list[int] = []
    real = verifier_runtime.hashlib.sha256

    class Counting:
        def __init__(self) -> None:
            self.inner = real()
            hashed.append(1)

        def update(self, data: bytes) -> None:
            self.inner.update(data)

        def hexdigest(self) -> str:
            return self.inner.hexdigest()

    monkeypatch.setattr(verifier_runtime.hashlib, "sha256", Counting)
    files = {"bin/t": (b"#!/bin/sh\necho one\n", True), "lib/big.bin": (bytes(range(256)) * 4096, False)}
    first = materialise_files(files, "t", tmp_path)
    assert materialise_files(files, "t", tmp_path) == first and len(hashed) == 1  # hashed once
    files["bin/t"] = (b"#!/bin/sh\necho two\n", True)  # edited in place: new bytes
    second = materialise_files(files, "t", tmp_path)
    assert second != first and (second / "bin/t").read_bytes() == b"#!/bin/sh\necho two\n" and len(hashed) == 2
    same_bytes = {"bin/t": files["bin/t"], "lib/big.bin": (files["lib/big.bin"][0], True)}  # only the mode differs
    assert materialise_files(same_bytes, "t", tmp_path) not in (first, second)
    moved = {"bin/u": files["bin/t"], "lib/big.bin": files["lib/big.bin"]}
    assert materialise_files(moved, "t", tmp_path) not in (first, second)
    assert materialise_files(dict(files), "t", tmp_path) == second  # equal content, new dict: the known digest
    assert len(hashed) == 4


@pytest.fixture(scope="module")
def bwrap_backend():
    from autoenvscaling.sandbox.bwrap import BwrapBackend

    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    return BwrapBackend()


def test_a_plugins_runtime_reaches_its_domains_verifier_only(bwrap_backend):
    runner = TrialRunner(bwrap_backend, host=create_host(entrypoints=False, plugins=[ProbePlugin()]))
    assert [r.name for r in runner.runtimes] == ["offline", "probe"]
    mine, other = (asyncio.run(runner.run(probe_task(domain), NopAgent())) for domain in ("probe", "terminal"))
    assert mine.reward == 1.0, mine.steps[-1].verifier.output_tail
    assert mine.steps[-1].verifier.runtimes == ["offline", "probe"]
    assert other.reward == 0.0 and other.steps[-1].verifier.runtimes == ["offline"]
    assert "probe-tool: command not found" in other.steps[-1].verifier.output_tail


def _verify_in_probe_sandbox(backend, agent: str, verifier: str, after: str):
    """A probe-domain sandbox: the agent's command, then ``verifier`` as the verifier's command with
    the probe runtime at MOUNT, then ``after`` as the agent again. Returns both outputs and the
    attempt's changes under MOUNT."""
    task = probe_task("probe")
    runtime = ProbeRuntime(cache_dir=backend.cache_dir)

    async def go():
        prepared = await backend.prepare(task)
        sandbox = await backend.create(task, prepared)
        async with sandbox:
            await sandbox.exec(agent)
            seen = await sandbox.exec_verifier(verifier, mounts={MOUNT: runtime.materialise()}, user="nobody")
            later = await sandbox.exec(after)
            changes = [c.path for c in await sandbox.changes() if c.path.startswith(MOUNT + "/")]
            return seen, later, changes

    return asyncio.run(go())


def test_the_runtime_is_there_for_the_verifiers_command_alone(bwrap_backend):
    """Bound read-only into that one exec (any user can read it); never in the agent's commands, and
    nothing of it lands in the attempt's layer."""
    seen, after, changes = _verify_in_probe_sandbox(
        bwrap_backend, f"mkdir -p {MOUNT}/bin && echo planted > {MOUNT}/bin/probe-tool",
        f"cat {MOUNT}/bin/probe-tool; touch {MOUNT}/x || echo read-only", f"ls -A {MOUNT}; echo end")
    assert "echo probe ok" in seen.stdout and "planted" not in seen.stdout and "read-only" in seen.stdout
    assert after.stdout.split() == ["end"] and changes == []


def test_a_mount_point_the_agent_made_a_link_is_put_back_before_the_runtime_is_bound(bwrap_backend):
    """The agent's symlink at the mount point (to a folder of its own tools) is removed and the folder
    made in one trusted command; the verifier's command sees the runtime, and the link is gone."""
    seen, after, _ = _verify_in_probe_sandbox(
        bwrap_backend, f"mkdir -p /tmp/mine/bin {MOUNT.rsplit('/', 1)[0]} && echo planted > /tmp/mine/bin/probe-tool"
                       f" && ln -s /tmp/mine {MOUNT}",
        f"cat {MOUNT}/bin/probe-tool", f"test -L {MOUNT} && echo link; ls -A {MOUNT}; cat /tmp/mine/bin/probe-tool")
    assert "echo probe ok" in seen.stdout and "planted" not in seen.stdout
    assert after.stdout.split() == ["planted"]  # no link, an empty folder; the agent's own files untouched

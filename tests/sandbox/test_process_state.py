"""A bwrap sandbox's processes start in the state a container's do, whatever state the worker that
launches them is in: signal dispositions and mask, umask, rlimits and environment compared with a
docker container of the same image. The launching process here ignores SIGINT (as a pool worker
does), blocks a signal, has umask 077, a lowered stack size and a variable of its own."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from autoenvscaling.sandbox import forkserver, launcher, spawner

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures

PROBE = ("grep -E '^Sig(Ign|Blk)' /proc/self/status; echo umask $(umask); cat /proc/self/limits; "
         "env | sort | grep -v '^_='; python3 -c 'import signal; print(\"sigint\", signal.getsignal(signal.SIGINT))'")
# Limits the sandbox policy sets on purpose (the file-size cap against disk fills, the process and
# open-file caps); each backend applies its own.
POLICY_LIMITS = ("Max file size", "Max processes", "Max open files")
# What the engine adds to an exec's environment (podman: TERM and container; bwrap names the host).
ENGINE_VARIABLES = ("TERM", "container", "OLDPWD", "HOSTNAME")


@pytest.fixture
def dirty_launcher() -> Iterator[None]:
    """This process in the state a pool worker may be in, restored afterwards."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
    umask = os.umask(0o077)
    stack = resource.getrlimit(resource.RLIMIT_STACK)
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 22, stack[1]))  # soft only: root here cannot raise a hard one
    os.environ["AES_WORKER_ONLY"] = "1"
    spawner.restart()  # the next launch starts a fork server that inherits this state
    try:
        yield
    finally:
        spawner.restart()
        signal.signal(signal.SIGINT, previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.umask(umask)
        os.environ.pop("AES_WORKER_ONLY", None)
        resource.setrlimit(resource.RLIMIT_STACK, stack)

def _state(output: str) -> dict[str, Any]:
    state: dict[str, Any] = {"env": {}, "limits": {}}
    for line in output.splitlines():
        if line.startswith(("SigIgn", "SigBlk")):
            key, value = line.split(":")
            state[key] = value.strip()
        elif line.startswith(("umask ", "sigint ")):
            key, value = line.split(" ", 1)
            state[key] = value
        elif line.startswith("Max "):
            name = line[:26].strip()
            state["limits"][name] = line[26:].split()[:2]
        elif "=" in line and not line.startswith("Limit"):
            key, value = line.split("=", 1)
            state["env"][key] = value
    return state


def _probe(backend: Any, task: Any) -> dict[str, Any]:
    async def go() -> str:
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            result = await sb.exec(PROBE)
            assert result.ok, result.tail()
            return result.stdout

    return _state(asyncio.run(go()))


def _comparable(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "limits": {k: v for k, v in state["limits"].items() if k not in POLICY_LIMITS},
            "env": {k: v for k, v in state["env"].items() if k not in ENGINE_VARIABLES}}


@pytest.mark.docker
def test_a_bwrap_command_starts_in_the_state_a_container_gives(dirty_launcher, backend, docker_backend,
                                                                docker_basic_task, monkeypatch):
    docker = _probe(docker_backend, docker_basic_task)
    bwrap = _probe(backend, docker_basic_task)
    assert docker["SigIgn"] == "0000000000000000" and "default_int_handler" in docker["sigint"]  # the reference
    assert _comparable(bwrap) == _comparable(docker)
    assert bwrap["env"]["GREETING"] == "hello" and "AES_WORKER_ONLY" not in bwrap["env"]
    # Positive control: without the reset, the same launch inherits this process's state (forked
    # here, as where the fork server is off).
    monkeypatch.setenv("AUTOENVSCALING_FORKSERVER", "0")
    monkeypatch.setattr(forkserver, "clean_process_state", lambda: None)
    monkeypatch.setattr(launcher, "container_rlimits", lambda ours: [])
    inherited = _probe(backend, docker_basic_task)
    assert int(inherited["SigIgn"], 16) & (1 << (signal.SIGINT - 1))
    assert inherited["sigint"] in ("1", "Handlers.SIG_IGN")
    assert int(inherited["SigBlk"], 16) & (1 << (signal.SIGUSR2 - 1))
    assert inherited["umask"] == "0077"
    assert inherited["limits"]["Max stack size"][0] == str(1 << 22) != docker["limits"]["Max stack size"][0]


def test_a_verifier_stops_the_agents_program_with_ctrl_c(dirty_launcher, backend, monkeypatch):
    """tests/fixtures/harbor/signal-ctrl-c (as Terminal-Bench's cancel-async-tasks): the oracle
    scores 1 although this process ignores SIGINT, and 0 without the reset."""
    from pathlib import Path

    from autoenvscaling.agents.builtin import OracleAgent
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.tasks import read_task

    task = read_task(Path(__file__).resolve().parents[1] / "fixtures" / "harbor" / "signal-ctrl-c")
    result = asyncio.run(TrialRunner(backend).run(task, OracleAgent()))
    assert (result.status, result.reward) == ("ok", 1.0), result
    monkeypatch.setenv("AUTOENVSCALING_FORKSERVER", "0")
    monkeypatch.setattr(forkserver, "clean_process_state", lambda: None)
    ignored = asyncio.run(TrialRunner(backend).run(task, OracleAgent()))
    assert (ignored.status, ignored.reward) == ("ok", 0.0)
    assert "ignored Ctrl-C" in ignored.steps[-1].verifier.output_tail

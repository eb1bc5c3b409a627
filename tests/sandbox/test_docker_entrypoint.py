"""ENTRYPOINT services on the docker backend, against a real engine: the image's entrypoint runs
before the sandbox's init (as Docker appends the command to it), the services it started are the
sandbox's own and outlive every command, while whatever a command starts (setsid daemons, busy
process trees, a timed-out command's children) is still killed; an entrypoint that fails at start
is one line quoting its output. The fixture task scores oracle 1 and nop 0 through the trial runner."""

from __future__ import annotations

import asyncio

import pytest

from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.errors import SandboxError
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.base import SandboxPolicy

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures
from .conftest_docker import docker_task

pytestmark = pytest.mark.docker
FETCH = "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://api.internal/token', timeout=5).read().decode().strip())\""


def processes(sb):
    """The command lines of every process in the sandbox except pid 1 and the probe itself."""
    return sb.exec("for p in /proc/[0-9]*; do [ \"${p#/proc/}\" = 1 ] || [ \"${p#/proc/}\" = $$ ] || "
                   "tr '\\0' ' ' < $p/cmdline 2>/dev/null && echo; done", user="0")


def test_fixture_scores_oracle_1_and_nop_0(docker_backend, docker_fixture_env):
    task, prepared = docker_fixture_env("docker-entrypoint-service")
    runner = TrialRunner(docker_backend)

    async def go():
        return await runner.run(task, OracleAgent(), prepared=prepared), await runner.run(task, NopAgent(), prepared=prepared)

    oracle, nop = asyncio.run(go())
    assert prepared.details.entrypoint == ["/opt/api/entrypoint.sh"]
    assert oracle.status == "ok" and oracle.reward == 1.0, oracle.steps[-1].verifier.output_tail
    # The verifier reached the API after the agent's commands ran: the service survived them.
    assert "<api down>" not in oracle.steps[-1].verifier.output_tail
    assert nop.status == "ok" and nop.reward == 0.0, nop


def test_entrypoint_services_outlive_commands_whose_own_processes_do_not(docker_backend, docker_fixture_env):
    task, prepared = docker_fixture_env("docker-entrypoint-service")

    async def go():
        async with await docker_backend.create(task, prepared) as sb:
            first = await sb.exec(FETCH)
            daemons = await sb.exec("setsid sleep 301 & nohup sleep 302 >/dev/null 2>&1 & (setsid sleep 303 &); "
                                    "for i in $(seq 30); do (while :; do sleep 0.01; done) & done; echo started")
            after_daemons = await processes(sb)
            slow = await sb.exec("setsid sleep 304 & sleep 305", timeout=1.5)
            after_timeout = await processes(sb)
            again = await sb.exec(FETCH)
            return sb.entrypoint_log, sb.spare, first, daemons, after_daemons, slow, after_timeout, again

    log, spare, first, daemons, after_daemons, slow, after_timeout, again = asyncio.run(go())
    assert "entrypoint: api.internal serving on port 80" in log  # the entrypoint's output is kept
    assert spare  # the API's processes were taken as the sandbox's own
    assert first.ok and len(first.stdout.strip()) == 36, first
    assert daemons.ok and daemons.stdout == "started\n"
    assert slow.timed_out
    for left in (after_daemons, after_timeout):
        lines = [line for line in left.stdout.splitlines() if line.strip()]
        assert not [line for line in lines if "sleep" in line], lines  # nothing a command started survived
        assert [line for line in lines if "api.py" in line], lines  # the entrypoint's service did
    assert again.ok and again.stdout == first.stdout  # the same service process answered throughout


def test_a_sandbox_without_entrypoint_spares_nothing(in_docker, docker_basic_env):
    """The common case keeps the one-syscall sweep: no ready wait, no spared processes."""
    async def go(sb):
        await sb.exec("setsid sleep 306 &")
        return sb.spare, await processes(sb)

    spare, left = in_docker(go)
    assert docker_basic_env.details.entrypoint is None
    assert spare == "" and "sleep" not in left.stdout


def test_an_entrypoint_that_fails_at_start_is_one_line_quoting_its_output(docker_backend):
    task = docker_task('FROM debian:bookworm\nCOPY start.sh /start.sh\nENTRYPOINT ["/bin/sh", "/start.sh"]\n',
                       files={"environment/start.sh": 'echo "starting the api"\n'
                                                      'echo "fatal: /etc/api.conf is missing" >&2\nexit 3\n'},
                       name="docker-entrypoint-fails")
    prepared = asyncio.run(docker_backend.prepare(task))

    async def go():
        sb = await docker_backend.create(task, prepared)
        with pytest.raises(SandboxError) as info:
            await sb.start()
        return sb, info.value

    sb, error = asyncio.run(go())
    assert "\n" not in error.message and "exited with code 3" in error.message
    assert error.message.endswith("fatal: /etc/api.conf is missing")  # its last output line
    assert 'exec "$@"' in (error.hint or "")
    assert "starting the api" in sb.entrypoint_log
    left = docker_backend.client.containers.list(all=True, filters={"label": "autoenvscaling.task=docker-entrypoint-fails"})
    assert left == []  # the failed start removed its container


@pytest.mark.parametrize("lose_first_probe", [False, True], ids=["", "a-probe-lost"])
def test_an_entrypoint_that_ignores_its_arguments_is_accepted_after_the_ready_timeout(docker_engine, monkeypatch,
                                                                                    lose_first_probe):
    """Docker runs ``ENTRYPOINT ["server"]`` images too (the command is appended and ignored): the
    sandbox waits for the init, then takes the entrypoint's processes as its own, and says so in its
    notes. A probe's answer lost on a busy machine (empty, as one once came back) is not taken for
    the init having run the command: the note is still written (a full run once lost it)."""
    from autoenvscaling.sandbox import docker_sandbox
    from autoenvscaling.sandbox.docker_backend import DockerBackend

    real = docker_sandbox.DockerSandbox._raw
    lost: list[str] = []

    async def first_probe_lost(self, script):  # noqa: ANN001, ANN202 - the method's own signature
        out = await real(self, script)
        if docker_sandbox.READY_MARKER in script and not lost:
            lost.append(out)
            return ""
        return out

    if lose_first_probe:
        monkeypatch.setattr(docker_sandbox.DockerSandbox, "_raw", first_probe_lost)

    backend = DockerBackend(policy=SandboxPolicy(memory_mb=192, pids=96))
    backend.ready_timeout = 1.5
    task = docker_task('FROM python:3.11-slim-bookworm\nWORKDIR /srv\nRUN echo served > index.html\n'
                       'ENTRYPOINT ["/bin/sh", "-c", "exec python3 -m http.server 8000"]\n', name="docker-entrypoint-server")

    async def go():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            await sb.exec("setsid sleep 307 &")
            # The server may still be starting when the sandbox accepts it (a loaded machine): wait for it.
            served = await sb.exec(f"for i in $(seq 600); do {FETCH.replace('http://api.internal/token', 'http://127.0.0.1:8000/')}"
                                   " 2>/dev/null && break; sleep 0.2; done", timeout=300)
            return sb.notes, served, await processes(sb)

    try:
        notes, served, left = asyncio.run(go())
    finally:
        asyncio.run(backend.aclose())
    assert any("did not run the container's command within 1.5s" in note for note in notes), notes
    assert served.stdout == "served\n" and "sleep" not in left.stdout
    assert not lose_first_probe or lost == ["waiting"]  # what was lost: the init had not run the command


SPAWNER = """#!/bin/sh
# A service that starts a worker of its own on request, after the sandbox was ready (as a browser
# service starts Chromium on first use).
( while :; do if [ -e /tmp/spawn ]; then rm -f /tmp/spawn; sleep 401 & fi; sleep 0.1; done ) &
exec "$@"
"""


def test_what_a_service_starts_later_is_its_own_while_the_agents_orphans_are_not(docker_backend):
    """The service's later children are the sandbox's own, as the entrypoint's pid namespace makes
    them on bwrap: they outlive commands and the sweep before verification leaves them (and does not
    call them survivors); what a command started is still killed."""
    task = docker_task("FROM debian:bookworm\nCOPY entrypoint.sh /entrypoint.sh\nRUN chmod +x /entrypoint.sh\n"
                       'ENTRYPOINT ["/entrypoint.sh"]\n', files={"environment/entrypoint.sh": SPAWNER},
                       name="late-worker")

    async def go():
        prepared = await docker_backend.prepare(task)
        async with await docker_backend.create(task, prepared) as sb:
            # 'slee[p]' so that the pattern does not find itself in this command's own cmdline; the
            # arguments are NUL-separated, and grep reads NUL as the end of a line, so they are joined first
            waited = await sb.exec("touch /tmp/spawn; i=0; while [ $i -lt 600 ] && ! for c in /proc/[0-9]*/cmdline; do "
                                   "tr '\\0' ' ' < $c; echo; done 2>/dev/null | grep -q 'slee[p] 401'; "
                                   "do i=$((i+1)); sleep 0.1; done; [ $i -lt 600 ] && echo seen-401; "
                                   "setsid sleep 402 & nohup sleep 403 >/dev/null 2>&1 &")
            assert "seen-401" in waited.stdout, waited.stdout  # the service's worker started before the command's
            after = await processes(sb)
            swept = await sb.end_agent_processes()
            return after, swept, await processes(sb)

    after, swept, last = asyncio.run(go())
    assert "sleep 401" in after.stdout, after.stdout  # the service's worker survived the command's sweep
    assert "sleep 402" not in after.stdout and "sleep 403" not in after.stdout, after.stdout
    assert swept is False  # nothing of the agent's was left for the sweep before verification
    assert "sleep 401" in last.stdout


def test_a_lost_first_snapshot_is_not_taken_as_the_processes_to_spare(docker_backend, docker_fixture_env, monkeypatch):
    """The processes the sweep spares are taken once two snapshots agree. On a busy machine the first
    snapshot once came back empty (not even pid 1): taken alone as the set to spare, it let the first
    command's sweep kill the entrypoint's API (the oracle then found it down). Here the first
    snapshot is blanked on purpose and the API still survives a command; the positive control runs a
    command with nothing spared, as the old code did, and the API is gone."""
    from autoenvscaling.sandbox import docker_sandbox

    task, prepared = docker_fixture_env("docker-entrypoint-service")
    real = docker_sandbox.DockerSandbox._raw
    blanked: list[str] = []

    async def first_snapshot_lost(self, script):  # noqa: ANN001, ANN202 - the method's own signature
        out = await real(self, script)
        if "printf" in script and not out.startswith("waiting") and not blanked:
            blanked.append(out)
            return ""
        return out

    monkeypatch.setattr(docker_sandbox.DockerSandbox, "_raw", first_snapshot_lost)

    async def go():
        async with await docker_backend.create(task, prepared) as sb:
            spared = sb.spare
            await sb.exec("true")
            kept = await processes(sb)
        async with await docker_backend.create(task, prepared) as sb:
            sb.spare = ""  # what taking the blank snapshot left to spare
            await sb.exec("true")
            swept = await processes(sb)
        return spared, kept, swept

    spared, kept, swept = asyncio.run(go())
    assert blanked and "1:" in blanked[0]  # the snapshot that was lost did list the processes
    assert spared and any("/opt/api/api.py" in line for line in kept.stdout.splitlines()), (spared, kept.stdout)
    assert not any("/opt/api/api.py" in line for line in swept.stdout.splitlines()), swept.stdout

"""Leak counts: a batch of sandboxed attempts on each backend leaves nothing of ours behind.

Each attempt does what agents do (commands, a setsid daemon and a double-forked one, a command
killed by its timeout, a file up and down) and is closed. Everything an attempt created is recorded
while it runs (its user namespace, cgroups, run directory, container, rootfs mount), so leftovers
are attributed to these attempts exactly, even while other tests run sandboxes beside this one.
Counted right after the batch: processes (podman's conmon included), mounts, namespaces, cgroups,
networks and volumes, temporary directories, and this process's open file descriptors.

The fast set runs a small batch; the slow set runs AUTOENVSCALING_LEAK_ATTEMPTS (default 1,000)
per backend: ``.venv/bin/python -m pytest tests/sandbox/test_leaks.py -m slow -n 2``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from autoenvscaling.sandbox.isolation import run_dir

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures

FAST_ATTEMPTS = 8
CONCURRENCY = 4
AGENT = ("echo start > /tmp/work; (setsid sleep 600 &); (sh -c 'sleep 601 &' &); "
         "for i in 1 2 3; do echo $i >> /tmp/work; done; wc -l < /tmp/work")


def attempts() -> int:
    return int(os.environ.get("AUTOENVSCALING_LEAK_ATTEMPTS", "1000"))


@dataclass
class Traces:
    """What the attempts created, as recorded while each ran."""

    namespaces: set[int] = field(default_factory=set)  # user namespace inodes (bwrap)
    paths: set[str] = field(default_factory=set)  # run directories and cgroups: gone after close
    mounts: set[str] = field(default_factory=set)  # paths no mount may name after close
    containers: set[str] = field(default_factory=set)  # docker container ids
    attempts: int = 0


def _proc_entries() -> Iterator[tuple[int, str]]:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            yield int(entry.name), f"/proc/{entry.name}"


def _read(path: str, binary: bool = False) -> Any:
    try:
        with open(path, "rb" if binary else "r") as fh:
            return fh.read()
    except OSError:
        return b"" if binary else ""


def leftovers(traces: Traces) -> dict[str, list[str]]:
    """Everything of the traced attempts still on the host, by kind."""
    found: dict[str, list[str]] = {"processes": [], "mounts": [], "cgroups and directories": []}
    containers = [c.encode() for c in traces.containers]
    candidates = []
    for pid, proc in _proc_entries():
        if pid == os.getpid():
            continue
        try:
            user_ns = os.stat(f"{proc}/ns/user").st_ino
        except OSError:
            continue
        stat = _read(f"{proc}/stat")
        state, ppid = (stat.rsplit(")", 1)[1].split()[:2] + ["", ""])[:2] if ")" in stat else ("", "")
        if state == "Z" and ppid != str(os.getpid()):
            continue  # dead, and not ours to wait for: the host's init reaps it (our own zombies count)
        cmdline = _read(f"{proc}/cmdline", binary=True)
        cgroup = _read(f"{proc}/cgroup", binary=True)
        if user_ns in traces.namespaces or any(c in cmdline or c in cgroup for c in containers):
            candidates.append((pid, user_ns, cmdline))
    # The kernel reuses a freed namespace's inode number: a namespace whose bwrap names a run
    # directory that is not one of ours belongs to a sandbox of another process (another test
    # worker), not to an attempt of ours that outlived its close.
    jails = f"{run_dir()}/".encode()
    ours = [p.encode() for p in traces.paths]
    foreign = {ns for _, ns, cmdline in candidates if jails in cmdline and not any(p in cmdline for p in ours)}
    for pid, user_ns, cmdline in candidates:
        if user_ns not in foreign:
            words = cmdline.replace(b"\0", b" ")[:160].decode(errors="replace")
            found["processes"].append(f"{pid} {words}")
    mountinfo = _read("/proc/self/mountinfo") + _read("/proc/1/mountinfo")
    names = traces.paths | traces.mounts | traces.containers
    for line in mountinfo.splitlines():
        if any(name in line for name in names):
            found["mounts"].append(line[:200])
    found["cgroups and directories"] = sorted(p for p in traces.paths if os.path.lexists(p))
    return {kind: items for kind, items in found.items() if items}


def _open_fds(docker: Any = None) -> set[str]:
    """This process's open file descriptors. The docker client's pooled connections (one per thread,
    reused, bounded) are closed first, and a socket waiting for the cycle collector is not a leak."""
    if docker is not None:
        docker.client.api.close()
    gc.collect()
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.add(f"{fd} -> {os.readlink(f'/proc/self/fd/{fd}')}")
        except OSError:
            pass
    return out


async def _batch(n: int, one: Callable[[int], Any]) -> None:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def guarded(i: int) -> None:
        async with gate:
            await one(i)

    await asyncio.gather(*(guarded(i) for i in range(n)))


async def _agent_work(sb: Any, tmp: Path, i: int) -> None:
    out = await sb.exec(AGENT, timeout=60)
    assert out.ok and out.stdout.strip() == "4", out.tail()
    slow = await sb.exec("sleep 600", timeout=0.5)  # always ends by its timeout: the work is endless
    assert slow.timed_out
    source = tmp / f"in-{i}.txt"
    source.write_text(f"attempt {i}\n")
    await sb.upload(source, "/app/in.txt")
    await sb.download("/app/in.txt", tmp / f"out-{i}")
    assert (tmp / f"out-{i}" / "in.txt").read_text() == f"attempt {i}\n"


def _count(record: Callable[[str], None], backend_name: str, traces: Traces, fds_before: set[str],
           fds_after: set[str], tmp_left: list[str], extra: dict[str, list[str]]) -> dict[str, list[str]]:
    left = leftovers(traces)
    left.update({k: v for k, v in extra.items() if v})
    if fds_after - fds_before:
        left["open file descriptors"] = sorted(fds_after - fds_before)
    if tmp_left:
        left["temporary directories"] = tmp_left
    counts = ", ".join(f"{kind} {len(left.get(kind, []))}" for kind in
                       ("processes", "mounts", "cgroups and directories", "open file descriptors",
                        "temporary directories", "containers, networks and volumes"))
    record(f"leak count: {backend_name}, {traces.attempts} attempts: {counts}")
    return left


@pytest.fixture
def count(record_property: Callable[[str, object], None]) -> Callable[[str], None]:
    """Records a count line; the session's summary prints it (tests/conftest.py)."""
    return lambda line: record_property("count", line)


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary files of this process land here, so what is left can be counted."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def _bwrap_leaks(record: Callable[[str], None], backend: Any, task: Any, prepared: Any, n: int, work: Path,
                 tmp: Path) -> dict[str, list[str]]:
    traces = Traces()

    async def one(i: int) -> None:
        async with await backend.create(task, prepared) as sb:
            await _agent_work(sb, work, i)
            jail = sb.jail
            assert jail.namespaces is not None
            traces.namespaces.add(os.fstat(jail.namespaces.userns).st_ino)
            traces.paths.add(str(jail.dir))
            traces.paths.update(str(d) for d in jail.cgroups.dirs)
            traces.attempts += 1

    asyncio.run(_batch(CONCURRENCY, one))  # one-time state (host facts, caches, pooled connections) first
    fds_before = _open_fds()
    asyncio.run(_batch(n, one))
    return _count(record, "bwrap", traces, fds_before, _open_fds(), sorted(os.listdir(tmp)), {})


def _docker_leaks(record: Callable[[str], None], backend: Any, task: Any, prepared: Any, n: int, work: Path,
                  tmp: Path) -> dict[str, list[str]]:
    traces = Traces()
    api = backend.client.api

    async def one(i: int) -> None:
        async with await backend.create(task, prepared) as sb:
            await _agent_work(sb, work, i)
            traces.containers.add(sb.container_id)
            merged = api.inspect_container(sb.container_id)["GraphDriver"]["Data"].get("MergedDir")
            if merged:
                traces.mounts.add(merged)
            traces.attempts += 1

    asyncio.run(_batch(CONCURRENCY, one))
    fds_before = _open_fds(backend)
    asyncio.run(_batch(n, one))
    fds_after = _open_fds(backend)
    mine = {"label": f"autoenvscaling.pid={os.getpid()}"}
    engine = [f"container {c['Id'][:12]}" for c in api.containers(all=True, filters=mine)
              if c["Id"] in traces.containers]
    engine += [f"network {x['Name']}" for x in api.networks(filters=mine)]
    engine += [f"volume {x['Name']}" for x in (api.volumes(filters=mine).get("Volumes") or [])]
    return _count(record, "docker", traces, fds_before, fds_after, sorted(os.listdir(tmp)),
                  {"containers, networks and volumes": engine})


def test_bwrap_attempts_leave_nothing_behind(count, backend, basic_task, basic_env, private_tmp, tmp_path):
    left = _bwrap_leaks(count, backend, basic_task, basic_env, FAST_ATTEMPTS, tmp_path, private_tmp)
    assert left == {}


@pytest.mark.docker
def test_docker_attempts_leave_nothing_behind(count, docker_backend, docker_basic_task, docker_basic_env, private_tmp,
                                              tmp_path):
    left = _docker_leaks(count, docker_backend, docker_basic_task, docker_basic_env, FAST_ATTEMPTS, tmp_path,
                         private_tmp)
    assert left == {}


@pytest.mark.slow
def test_a_thousand_bwrap_attempts_leave_nothing_behind(count, backend, basic_task, basic_env, private_tmp, tmp_path):
    left = _bwrap_leaks(count, backend, basic_task, basic_env, attempts(), tmp_path, private_tmp)
    assert left == {}


@pytest.mark.slow
@pytest.mark.docker
def test_a_thousand_docker_attempts_leave_nothing_behind(count, docker_backend, docker_basic_task, docker_basic_env,
                                                         private_tmp, tmp_path):
    left = _docker_leaks(count, docker_backend, docker_basic_task, docker_basic_env, attempts(), tmp_path, private_tmp)
    assert left == {}


def test_the_count_sees_what_an_attempt_leaves(backend, basic_task, basic_env):
    """Positive control: a running attempt (a service in it) is found by every count that applies,
    and nothing is once it is closed."""
    traces = Traces()

    async def go() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        sb = await backend.create(basic_task, basic_env)
        await sb.start()
        try:
            jail = sb.jail
            traces.namespaces.add(os.fstat(jail.namespaces.userns).st_ino)
            traces.paths.add(str(jail.dir))
            traces.paths.update(str(d) for d in jail.cgroups.dirs)
            await jail.spawn(["sleep", "600"], env={"PATH": "/usr/bin:/bin"}, cwd="/")
            running = leftovers(traces)
            # another worker's sandbox whose namespace got an inode number we had recorded: not ours
            reused = leftovers(Traces(namespaces=set(traces.namespaces), paths={"/elsewhere"}))
        finally:
            await sb.close()
        assert "processes" not in reused, reused
        return running, leftovers(traces)

    running, closed = asyncio.run(go())
    assert running["processes"] and running["mounts"] and running["cgroups and directories"], running
    assert closed == {}

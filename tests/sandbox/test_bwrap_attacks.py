"""Attacks on the bwrap sandbox, one test each, on the real backend. Each test also checks, where it
is cheap, a control showing that the probe would have noticed an escape."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

from autoenvscaling.sandbox.base import SandboxPolicy
from autoenvscaling.sandbox.isolation import SANDBOX_UID, UID_RANGE, host_facts, run_dir

from .conftest import make_task


def _host_processes_with(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


def test_host_secrets_are_unreadable(in_sandbox, tmp_path):
    marker = f"host-secret-{secrets.token_hex(8)}"  # the content; file names differ from it
    tag = secrets.token_hex(6)
    secret_files = [Path("/root") / f".aes-{tag}", Path("/tmp") / f"aes-{tag}"]  # 0600 and world-readable
    secret_files[0].write_text(marker)
    secret_files[0].chmod(0o600)
    secret_files[1].write_text(marker)
    secret_files[1].chmod(0o644)
    host_shadow = Path("/etc/shadow").read_text()
    try:
        async def probe(sb):
            return (await sb.exec(f"cat /etc/shadow; cat {secret_files[0]} {secret_files[1]}; "
                                  f"cat /proc/1/root{secret_files[1]}; "
                                  f"grep -rsl {marker} / --exclude-dir=proc --exclude-dir=sys; "
                                  "echo uid_map: $(cat /proc/self/uid_map)", timeout=60))

        result = in_sandbox(probe)
    finally:
        for f in secret_files:
            f.unlink()
    assert marker not in result.stdout + result.stderr
    assert result.stdout.split("uid_map:")[0].strip() != host_shadow.strip()  # the image's own shadow file
    # ids 0-65535 inside are the unprivileged range from SANDBOX_UID outside, so host-root-only
    # files stay closed.
    assert result.stdout.split("uid_map:")[1].split() == ["0", str(SANDBOX_UID), str(UID_RANGE)]


def test_writes_stay_inside_the_attempt(in_sandbox, basic_env):
    name = f"pwned-{secrets.token_hex(6)}"
    targets = [f"/etc/{name}", f"/usr/bin/{name}", f"/{name}", f"/tmp/{name}", f"/root/{name}"]
    lowers = [Path(p) for p in basic_env.details.lower]
    before = {p: sorted(os.listdir(p / "etc")) for p in lowers if (p / "etc").is_dir()}
    seen: dict[str, str] = {}

    async def attack(sb):
        result = await sb.exec(" && ".join(f"echo x > {t}" for t in targets) + " && rm -f /etc/hostname && ls /etc")
        assert result.ok, result.tail()
        seen["root"] = str(sb.jail.root)
        return result

    result = in_sandbox(attack)
    assert name in result.stdout and "hostname" not in result.stdout.split()  # the writes happened, inside
    for t in targets:
        assert not Path(t).exists(), f"{t} appeared on the host"
    after = {p: sorted(os.listdir(p / "etc")) for p in lowers if (p / "etc").is_dir()}
    assert after == before  # the prepared layers are untouched (no file added, none whited out)
    assert not Path(seen["root"]).exists()  # the attempt's layer is gone after close


def test_no_route_to_the_internet(in_sandbox):
    try:
        ip = socket.gethostbyname("deb.debian.org")
    except OSError:
        ip = "151.101.2.132"  # a Fastly address deb.debian.org resolves to

    async def probe(sb):
        return await sb.exec(
            "python3 - <<'EOF'\n"
            "import socket\n"
            f"for host in ('deb.debian.org', '{ip}'):\n"
            "    try:\n"
            "        socket.create_connection((host, 80), timeout=5).close(); print('CONNECTED', host)\n"
            "    except OSError as exc:\n"
            "        print('blocked', host, type(exc).__name__, exc)\n"
            "EOF", timeout=60)

    result = in_sandbox(probe)
    assert result.ok, result.tail()
    assert "CONNECTED" not in result.stdout
    assert result.stdout.count("blocked") == 2


def _serve_once(port_holder: list[int], stop: threading.Event) -> None:
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        srv.settimeout(0.2)
        port_holder.append(srv.getsockname()[1])
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"host-loopback-reached\n")
            conn.close()


def test_host_loopback_is_unreachable(bwrap_cls, in_sandbox):
    port: list[int] = []
    stop = threading.Event()
    server = threading.Thread(target=_serve_once, args=(port, stop), daemon=True)
    server.start()
    while not port:
        time.sleep(0.01)
    probe_cmd = ("python3 -c \"import socket\ntry:\n s=socket.create_connection(('127.0.0.1', %d), timeout=5)"
                 "\n print(s.recv(100).decode())\nexcept OSError as e: print('refused', e)\"" % port[0])

    async def probe(sb):
        return await sb.exec(probe_cmd, timeout=60)

    try:
        isolated = in_sandbox(probe)
        # Control: a task granted the network shares the host's namespace and does reach the server.
        shared = in_sandbox(probe, task=make_task(environment={"allow_internet": True}),
                            using=bwrap_cls(policy=SandboxPolicy(network="task")))
    finally:
        stop.set()
        server.join()
    assert "host-loopback-reached" not in isolated.stdout and "refused" in isolated.stdout
    assert "host-loopback-reached" in shared.stdout


def test_setsid_daemons_do_not_outlive_the_exec(in_sandbox):
    marks = [f"{secrets.randbelow(10**6) + 4000}.{secrets.randbelow(10**8):08d}" for _ in range(3)]

    async def attack(sb):
        first = await sb.exec(f"setsid -f sleep {marks[0]}; nohup sleep {marks[1]} >/dev/null 2>&1 & echo started")
        alive_after_first = _host_processes_with(marks[0]) + _host_processes_with(marks[1])
        # Same through a timeout: the exec is killed while its daemon sleeps on.
        second = await sb.exec(f"setsid -f sleep {marks[2]}; sleep 600", timeout=1)
        return first, alive_after_first, second

    first, alive_after_first, second = in_sandbox(attack)
    assert first.ok and "started" in first.stdout
    assert alive_after_first == []
    assert second.timed_out and second.exit_code is None
    for mark in marks:
        assert _host_processes_with(mark) == []
    # Control: the probe does see such a process when one exists on the host.
    proc = subprocess.Popen(["sleep", marks[0]])
    try:
        assert _host_processes_with(marks[0])
    finally:
        proc.kill()
        proc.wait()


def test_fork_bomb_is_contained(in_sandbox):
    facts = host_facts()
    seen: dict[str, object] = {}

    async def attack(sb):
        result = await sb.exec("bomb() { bomb | bomb & }; bomb; sleep 3; echo survived", timeout=30)
        if facts.pids_cgroup:
            seen["events"] = (facts.pids_cgroup / sb.jail.name / "pids.events").read_text()
        seen["after"] = await sb.exec("echo still-usable")
        return result

    result = in_sandbox(attack)
    assert not result.timed_out and "survived" in result.stdout  # its own shell carried on and ended
    assert "Resource temporarily unavailable" in result.stderr  # forks were refused
    assert "still-usable" in seen["after"].stdout  # type: ignore[union-attr]
    if facts.pids_cgroup:  # the pids limit is what stopped it
        assert int(str(seen["events"]).split()[1]) > 0
    assert subprocess.run(["true"]).returncode == 0  # the host can still fork


def test_memory_bomb_is_contained(in_sandbox):
    async def attack(sb):
        bomb = await sb.exec("python3 -c \"x = []\nwhile True: x.append(bytearray(16 << 20))\"", timeout=60)
        return bomb, await sb.exec("echo still-usable")

    bomb, after = in_sandbox(attack)
    assert not bomb.ok and not bomb.timed_out
    assert bomb.exit_code == 137 or "MemoryError" in bomb.stderr  # OOM-killed, or ENOMEM without a cgroup
    assert "still-usable" in after.stdout


def test_filling_the_disk_hits_enospc_inside(in_sandbox, backend):
    cache_free = shutil.disk_usage(backend.cache_dir).free
    root_free = shutil.disk_usage("/").free

    async def attack(sb):
        fill = await sb.exec("dd if=/dev/zero of=/fill bs=1M count=400; df -m /; echo done", timeout=120)
        return fill, await sb.exec("rm /fill && echo x > /after && cat /after")

    fill, after = in_sandbox(attack)
    assert "No space left on device" in fill.stderr
    assert after.ok and after.stdout.strip() == "x"  # freeing space makes the sandbox usable again
    slack = 40 << 20  # other tests share this disk
    assert shutil.disk_usage(backend.cache_dir).free > cache_free - slack
    assert shutil.disk_usage("/").free > root_free - slack


def test_attempts_never_see_each_other(backend, basic_task, basic_env):
    secret = secrets.token_hex(8)

    async def scenario():
        a = await backend.create(basic_task, basic_env)
        b = await backend.create(basic_task, basic_env)
        async with a, b:
            wrote = await a.exec(f"echo {secret} > /app/mine && echo {secret} > /tmp/mine && cat /app/mine")
            in_b = await b.exec("cat /app/mine /tmp/mine; ls /app /tmp")
        async with await backend.create(basic_task, basic_env) as c:
            in_c = await c.exec("cat /app/mine /tmp/mine; ls /app /tmp")
        return wrote, in_b, in_c

    wrote, in_b, in_c = asyncio.run(scenario())
    assert secret in wrote.stdout  # control: the file exists in its own attempt
    for other in (in_b, in_c):
        assert secret not in other.stdout and "mine" not in other.stdout
        assert "No such file" in other.stderr


def test_tests_and_solution_are_absent_during_the_agent_phase(backend):
    unique = f"UNIQUE-{secrets.token_hex(8)}"
    task = make_task(files={"tests/test.sh": f"#!/bin/bash\n# {unique}\necho 1 > /logs/verifier/reward.txt\n",
                            "solution/solve.sh": f"#!/bin/bash\necho {unique}-solution\n",
                            "environment/data.txt": "context only\n"})
    search = f"grep -rsl {unique} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; echo searched"

    async def scenario():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            agent_phase = await sb.exec(search, timeout=120)
            # Control: once the runner uploads tests/ (verification time) the same search finds it.
            await sb.upload_files({p: (f.data, f.executable) for p, f in task.subtree("tests").items()}, "/tests")
            verify_phase = await sb.exec(search, timeout=120)
        return agent_phase, verify_phase

    agent_phase, verify_phase = asyncio.run(scenario())
    assert agent_phase.stdout.strip() == "searched"
    assert "/tests/test.sh" in verify_phase.stdout


def test_nothing_is_left_behind_after_close(backend, basic_task, basic_env):
    facts = host_facts()

    async def scenario():
        sb = await backend.create(basic_task, basic_env)
        await sb.start()
        await sb.exec("setsid -f sleep 600; echo data > /tmp/x")
        name = sb.jail.name
        await sb.close()
        await sb.close()  # idempotent
        return name

    name = asyncio.run(scenario())
    assert not (run_dir() / name).exists()
    assert not any(str(m).startswith(str(run_dir() / name)) for m in _mount_points())
    for parent in (facts.memory_cgroup, facts.pids_cgroup, facts.kill_cgroup):
        if parent is not None:
            assert not (parent / name).exists()


def _mount_points() -> list[str]:
    return [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]

"""Functional behaviour of bwrap sandboxes: exec, limits on time and output, files in and out,
symlinks planted by the agent, lifecycle, stale cleanup, reported protections."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
import secrets
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from autoenvscaling.errors import SandboxError
from autoenvscaling.sandbox.isolation import SANDBOX_GID, cleanup_stale, host_facts, mount_tmpfs, run_dir

from .conftest import make_task


def test_exec_exit_codes_streams_env_and_cwd(backend):
    task = make_task("FROM ubuntu:24.04\nENV FROM_DOCKERFILE=df\nWORKDIR /srv/app\n",
                     environment={"env": {"FROM_TASK": "task"}})

    async def scenario():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            return (sb.workdir,
                    await sb.exec("echo out; echo err >&2; exit 3"),
                    await sb.exec('echo "$FROM_DOCKERFILE $FROM_TASK $EXTRA $HOME $PATH"; pwd; whoami',
                                  env={"EXTRA": "x y"}),
                    await sb.exec("pwd", cwd="/tmp"),
                    await sb.exec("env | sort"))

    workdir, codes, env, cwd, full_env = asyncio.run(scenario())
    assert workdir == "/srv/app"
    assert (codes.exit_code, codes.stdout, codes.stderr, codes.ok) == (3, "out\n", "err\n", False)
    values, pwd, who = env.stdout.splitlines()
    assert values.split(" ", 4)[:4] == ["df", "task", "x", "y"] and "/root /usr/local/sbin" in values
    assert (pwd, who) == ("/srv/app", "root")
    assert cwd.stdout.strip() == "/tmp"
    # Nothing of the host's environment leaks in.
    names = {line.split("=", 1)[0] for line in full_env.stdout.splitlines()}
    assert "AUTOENVSCALING_CACHE" not in names and "VIRTUAL_ENV" not in names


def test_task_workdir_is_created_when_the_image_lacks_it(backend, basic_env):
    task = make_task(environment={"workdir": "/work/here"})

    async def scenario():
        async with await backend.create(task, basic_env) as sb:
            return sb.workdir, await sb.exec("pwd && touch x && ls")

    workdir, result = asyncio.run(scenario())
    assert workdir == "/work/here" and result.stdout.split() == ["/work/here", "x"]


def _endless() -> str:
    """A sleep that outlasts any test, named uniquely so the host's process list can be searched for it."""
    return f"{secrets.randbelow(10**6) + 4000}.{secrets.randbelow(10**8):08d}"


def _on_host(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


def test_timeout_kills_and_reports(in_sandbox):
    marker = _endless()

    async def scenario(sb):
        # Only the timeout can end the command; it is long enough for "before" on a loaded machine.
        result = await sb.exec(f"echo before; sleep {marker}; echo after", timeout=3.0)
        return result, _on_host(marker), await sb.exec("echo next")

    result, left, after = in_sandbox(scenario)
    assert result.timed_out and result.exit_code is None and not result.ok
    assert result.stdout == "before\n"
    assert left == []  # nothing of the command outlived the timeout
    assert after.ok


def test_output_is_capped_and_drained(in_sandbox):
    async def scenario(sb):
        return await sb.exec("head -c 200000000 /dev/zero | tr '\\0' a; echo tail >&2", output_limit=1000, timeout=60)

    result = in_sandbox(scenario)
    assert result.ok and result.truncated
    assert result.stdout == "a" * 1000
    assert result.stderr == "tail\n"


def test_stdin_is_fed(in_sandbox):
    payload = b"line one\nline two\n" * 50000  # ~0.9 MB: more than a pipe buffer

    async def scenario(sb):
        return await sb.exec("wc -l; md5sum", stdin=payload), await sb.exec("cat", stdin=b"")

    counted, empty = in_sandbox(scenario)
    assert counted.stdout.splitlines()[0].strip() == "100000"
    assert empty.ok and empty.stdout == ""


def test_users_from_the_image(backend):
    task = make_task("FROM ubuntu:24.04\nRUN useradd -m -u 1234 agent\nUSER agent\nWORKDIR /home/agent\n")

    async def scenario():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            as_default = await sb.exec("id -u; echo $HOME; touch mine && ls -ln mine")
            as_root = await sb.exec("id -u", user="root")
            with pytest.raises(SandboxError, match="does not exist"):
                await sb.exec("true", user="nobody-here")
            return prepared, as_default, as_root

    prepared, as_default, as_root = asyncio.run(scenario())
    assert prepared.user == "agent"
    uid, home, listing = as_default.stdout.splitlines()
    assert (uid, home) == ("1234", "/home/agent") and " 1234 " in listing
    assert as_root.stdout.strip() == "0"


def test_upload_download_round_trip(in_sandbox, tmp_path):
    files = {"a.txt": b"alpha\n", "deep/er/b.bin": bytes(range(256)) * 100, "run.sh": (b"#!/bin/sh\necho ran\n", True)}

    async def scenario(sb):
        await sb.upload_files(files, "/data/in")
        ran = await sb.exec("/data/in/run.sh && stat -c %a /data/in/run.sh /data/in/a.txt")
        await sb.download("/data/in", tmp_path)
        single = await sb.read_file("/data/in/deep/er/b.bin")
        missing = await sb.read_file("/data/nope")
        with pytest.raises(FileNotFoundError):
            await sb.get_archive("/data/nope")
        runs = []
        run = sb.jail.run

        async def counted(*args, **kwargs):
            runs.append(args[0])
            return await run(*args, **kwargs)

        sb.jail.run = counted
        # Several files: one command per folder; a missing file, folder or name, and a folder, are None.
        many = await sb.read_files(["/data/in/a.txt", "data/in/run.sh", "/data/in/nope", "/data/in/deep",
                                    "/data/in/deep/er/b.bin", "/nowhere/x", "/"])
        none = await sb.read_files(["/data/in/nope", "/data/in/nope2"])
        del sb.jail.run
        return ran, single, missing, many, none, len(runs)

    ran, single, missing, many, none, runs = in_sandbox(scenario)
    assert many == {"/data/in/a.txt": b"alpha\n", "data/in/run.sh": b"#!/bin/sh\necho ran\n", "/data/in/nope": None,
                    "/data/in/deep": None, "/data/in/deep/er/b.bin": bytes(range(256)) * 100, "/nowhere/x": None,
                    "/": None}
    assert none == {"/data/in/nope": None, "/data/in/nope2": None}
    assert runs == 4  # three folders in the first call ("/" needs no command), one in the second
    assert ran.stdout.split() == ["ran", "755", "644"]
    assert (tmp_path / "in" / "a.txt").read_bytes() == b"alpha\n"
    assert (tmp_path / "in" / "deep/er/b.bin").read_bytes() == bytes(range(256)) * 100
    assert single == bytes(range(256)) * 100 and missing is None


def test_planted_symlinks_are_not_followed_out(in_sandbox, tmp_path):
    secret = tmp_path / f"host-{secrets.token_hex(6)}"
    secret.write_text("host secret\n")
    victim_dir = tmp_path / "victim"
    victim_dir.mkdir()

    async def scenario(sb):
        await sb.exec(f"mkdir -p /logs/verifier && ln -s {secret} /logs/verifier/reward.txt && "
                      "ln -s /etc/shadow /logs/verifier/reward.json && "
                      f"mkdir -p {victim_dir} && ln -s {victim_dir} /drop")
        txt = await sb.read_file("/logs/verifier/reward.txt")
        js = await sb.read_file("/logs/verifier/reward.json")
        both = await sb.read_files(["/logs/verifier/reward.txt", "/logs/verifier/reward.json"])
        archive = await sb.get_archive("/drop")
        # An upload into the planted link lands inside the sandbox (at the link's in-sandbox target).
        await sb.upload_files({"planted.txt": b"x"}, "/drop")
        landed = await sb.exec(f"ls {victim_dir}")
        return txt, js, both, archive, landed

    txt, js, both, archive, landed = in_sandbox(scenario)
    assert txt is None and js is None and set(both.values()) == {None}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = tar.getmembers()
    assert [(m.name, m.issym()) for m in members] == [("drop", True)]
    assert os.listdir(victim_dir) == []  # nothing written on the host
    assert landed.stdout.strip() == "planted.txt"


def test_lifecycle_errors_and_idempotent_close(backend, basic_task, basic_env):
    async def scenario():
        sb = await backend.create(basic_task, basic_env)
        with pytest.raises(SandboxError, match="not running"):
            await sb.exec("true")
        await sb.start()
        await sb.start()
        ok = await sb.exec("true")
        await sb.close()
        await sb.close()
        with pytest.raises(SandboxError, match="not running"):
            await sb.exec("true")
        return ok

    assert asyncio.run(scenario()).ok


def test_close_ends_a_running_exec(backend, basic_task, basic_env):
    marker = _endless()

    async def scenario():
        sb = await backend.create(basic_task, basic_env)
        await sb.start()
        running = asyncio.create_task(sb.exec(f"sleep {marker}", timeout=600))
        for _ in range(1200):  # until the command runs (seconds on a loaded machine)
            if _on_host(marker) or running.done():
                break
            await asyncio.sleep(0.05)
        was_running = bool(_on_host(marker))
        await sb.close()
        return was_running, await running, _on_host(marker)

    was_running, result, left = asyncio.run(scenario())
    # The command never ends on its own and its timeout is far away: only close() can have ended it.
    assert was_running and not result.timed_out and result.exit_code != 0
    assert left == []


def test_concurrent_sandboxes(backend, basic_task, basic_env):
    async def one(i: int):
        async with await backend.create(basic_task, basic_env) as sb:
            return (await sb.exec(f"echo {i} > /tmp/me; sleep 0.3; cat /tmp/me")).stdout.strip()

    async def scenario():
        return await asyncio.gather(*(one(i) for i in range(6)))

    assert asyncio.run(scenario()) == [str(i) for i in range(6)]


def test_stale_attempts_are_cleaned_up():
    if not host_facts().root:
        pytest.skip("needs root")
    dead = run_dir() / f"999999999.1.{secrets.randbelow(10**6)}"  # an owner pid that cannot exist
    dead.mkdir(mode=0o700)
    mount_tmpfs(dead, size_mb=1, gid=SANDBOX_GID)
    (dead / "left-behind").write_text("x")
    cgroup = host_facts().pids_cgroup / dead.name if host_facts().pids_cgroup else None
    if cgroup:
        cgroup.mkdir()
    removed = cleanup_stale()
    assert str(dead) in removed and not dead.exists()
    assert dead.name not in open("/proc/self/mountinfo").read()
    if cgroup:
        assert not cgroup.exists()


def test_a_cgroup_parent_another_process_removed_is_no_error(tmp_path, monkeypatch):
    """Every process removes the shared parent of its cgroups at exit when it is empty; another may
    be starting at that moment. Its stale sweep finds nothing to sweep (it raised FileNotFoundError,
    failing the task being checked), and its probe makes the parent again (it turned the memory
    cgroup off for the whole process)."""
    from autoenvscaling.sandbox import isolation

    gone = tmp_path / "gone" / "autoenvscaling"
    facts = dataclasses.replace(host_facts(), root=True, memory_cgroup=gone, pids_cgroup=gone, kill_cgroup=gone)
    monkeypatch.setattr(isolation, "host_facts", lambda: facts)
    monkeypatch.setattr(isolation, "run_dir", lambda: tmp_path / "run")
    (tmp_path / "run").mkdir()
    with pytest.raises(FileNotFoundError):
        list(gone.iterdir())  # what the sweep met
    assert isolation.cleanup_stale() == []

    own = next(line.split(":", 2)[2] for line in open("/proc/self/cgroup").read().splitlines()
               if "memory" in line.split(":", 2)[1].split(","))
    mount = tmp_path / "cgroupfs"
    (mount / own.lstrip("/")).mkdir(parents=True)
    monkeypatch.setattr(isolation, "_cgroup_mount", lambda controller: mount)
    real_mkdir, real_rmdir, removed = os.mkdir, os.rmdir, []

    def mkdir(path, mode=0o777, **kwargs):  # a cgroup file system: a new folder holds the controller's files
        name = os.path.basename(path)
        if name.startswith("probe-") and not removed:  # another process's exit, just before
            removed.append(os.path.dirname(path))
            real_rmdir(os.path.dirname(path))
        real_mkdir(path, mode, **kwargs)
        if name.startswith("probe-"):
            open(os.path.join(path, "memory.limit_in_bytes"), "w").close()

    monkeypatch.setattr(os, "mkdir", mkdir)

    def rmdir(path, **kwargs):  # ... whose files go with it
        for name in os.listdir(path):
            os.unlink(os.path.join(path, name))
        real_rmdir(path, **kwargs)

    monkeypatch.setattr(os, "rmdir", rmdir)
    parent = isolation._cgroup_parent("memory", "memory.limit_in_bytes")
    assert removed and parent == mount / own.lstrip("/") / "autoenvscaling" and parent.is_dir()


def test_protections_are_reported_truthfully(backend, monkeypatch):
    facts = host_facts()
    report = {p.name: p for p in backend.protections()}
    assert {"unprivileged host uid", "loopback-only network", "copy-on-write layer per attempt", "storage cap",
            "memory cgroup", "pids cgroup", "rlimits", "no-leftover kill"} <= set(report)
    assert report["memory cgroup"].active == (facts.memory_cgroup is not None)
    assert report["pids cgroup"].active == (facts.pids_cgroup is not None)
    assert report["unprivileged host uid"].active and report["loopback-only network"].active
    assert ("cgroup.kill" in report["no-leftover kill"].detail) == (facts.kill_cgroup is not None)
    assert report["warm verifier jail"].active == (facts.userns and facts.root and facts.overlay)
    monkeypatch.setenv("AUTOENVSCALING_WARM_VERIFIER", "0")
    off = {p.name: p for p in backend.protections()}["warm verifier jail"]
    assert not off.active and "AUTOENVSCALING_WARM_VERIFIER=0" in off.detail


def test_available_names_the_fix(bwrap_cls, monkeypatch):
    assert bwrap_cls.available() == (True, "")
    from autoenvscaling.sandbox import isolation

    # A machine without bubblewrap: what the user is told.
    monkeypatch.setenv("PATH", "/nonexistent")
    isolation.host_facts.cache_clear()
    try:
        ok, why = bwrap_cls.available()
    finally:
        isolation.host_facts.cache_clear()
    assert not ok and "bwrap" in why and "apt-get install bubblewrap" in why


def test_the_user_namespace_probe_survives_a_passing_failure_and_quotes_a_lasting_one():
    """host_facts asks bwrap once per process whether the sandbox uid may create namespaces; one
    failed probe on a busy machine once stopped a whole run with "bwrap backend unavailable". A
    failure is tried again, and one that lasts is reported with bwrap's own words."""
    from autoenvscaling.sandbox import isolation

    facts = host_facts()
    if not (facts.root and facts.bwrap and facts.userns):
        pytest.skip("needs root and a working bwrap")
    folder = Path(tempfile.mkdtemp(prefix="aes-probe-", dir="/tmp"))  # the probe runs as the sandbox uid
    try:
        folder.chmod(0o777)
        flaky = folder / "bwrap-flaky"
        flaky.write_text(f"#!/bin/sh\nif [ ! -e {folder}/failed ]; then : > {folder}/failed\n"
                         "  echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2; exit 1\n"
                         f"fi\nexec {facts.bwrap} \"$@\"\n")
        broken = folder / "bwrap-broken"
        broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
        for script in (flaky, broken):
            script.chmod(0o755)

        # the positive control: tried once, the passing failure is taken for the answer
        assert isolation._probe_userns(str(flaky), tries=1) == \
            "bwrap: Creating new namespace failed: Resource temporarily unavailable"
        (folder / "failed").unlink()
        assert isolation._probe_userns(str(flaky)) == ""  # tried again, it passes
        why = isolation._probe_userns(str(broken))
        assert why == "bwrap: No permissions to create new namespace"
        lacking = dataclasses.replace(facts, userns=False, userns_error=why)
        assert "bwrap said: bwrap: No permissions to create new namespace" in " ".join(lacking.missing())
    finally:
        shutil.rmtree(folder, ignore_errors=True)

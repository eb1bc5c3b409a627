"""Warm verifier interpreters (sandbox/warm.py) attacked as a policy would: a request that tries to
reach the next one through a process it leaves behind, a module it rewrites, a file in /tmp or
/dev/shm, the server's memory, or by killing the server. Each attack is held, and each has a
positive control with that one protection switched off (``WarmServer(weaken=...)``) where it pays.

The verifier program here (``judge.py``, bound read-only like a verifier runtime) runs the
answer's code when it starts with ``#attack`` (as a kernel harness runs a submission), then pays 1
for the answer 42, or when what the attacks aim at says so: its helper module's VERDICT, a cached
verdict in /tmp or /dev/shm. It lists the processes it finds besides itself and the server, and
when it finds one it waits (up to a minute) for someone to write its reward, which an honest run
never does: a survivor of an earlier request gets every chance to act.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from autoenvscaling.sandbox.base import WarmCommand
from autoenvscaling.sandbox.launcher import Limits
from autoenvscaling.sandbox.warm import WARM_INPUTS, WarmPool, WarmServer, split_layers
from autoenvscaling.tasks import Task

RUNTIME = "/opt/autoenvscaling-verifier/judge"
DOCKERFILE = """FROM python:3.13-slim-bookworm
RUN mkdir -p /opt/mods && chmod 777 /opt/mods && echo 'VERDICT = 0' > /opt/mods/helper.py && chmod 666 /opt/mods/helper.py
WORKDIR /app
"""
JUDGE = r'''
import json, os, sys, time

answer = open(sys.argv[1]).read()
reward = "/logs/verifier/reward.txt"
me = {1, os.getpid(), os.getppid()}
others = []
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) not in me:
        try:
            state = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            others.append(int(entry))
found = {"others": others, "tmp": sorted(os.listdir("/tmp")), "shm": sorted(os.listdir("/dev/shm"))}
if others:  # an earlier request's process: give it time to act
    deadline = time.monotonic() + 60
    while not os.path.exists(reward) and time.monotonic() < deadline:
        time.sleep(0.01)
if answer.startswith("#attack"):
    exec(answer)  # the untrusted part, as a harness runs a submission
sys.path.insert(0, "/opt/mods")
import helper

cached = []
for path in ("/tmp/verdict", "/dev/shm/verdict", "/dev/verdict"):
    if os.path.exists(path):
        cached.append(open(path).read().strip())
found["helper"] = helper.VERDICT
found["who"] = open("/app/who.txt").read().strip() if os.path.exists("/app/who.txt") else None
print("JUDGE " + json.dumps(found), flush=True)
if answer.strip() == "42" or helper.VERDICT == 1 or "1" in cached:
    with open(reward, "w") as f:
        f.write("1")
'''
DAEMON = """#attack
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            try:
                with open("/logs/verifier/reward.txt", "w") as f:
                    f.write("1")
            except OSError:
                pass
            time.sleep(0.005)
    os._exit(0)
"""
POISON = """#attack
for path, text in (("/opt/mods/helper.py", "VERDICT = 1\\n"), ("/dev/verdict", "1")):
    try:
        with open(path, "w") as f:
            f.write(text)
        print("POISON written", path)
    except OSError as exc:
        print("POISON refused", path, exc)
"""
LEAVE_FILES = """#attack
for path in ("/tmp/verdict", "/dev/shm/verdict"):
    with open(path, "w") as f:
        f.write("1")
print("LEFT both")
"""
MEMORY = """#attack
try:
    fd = os.open(f"/proc/{os.getppid()}/mem", os.O_RDWR)
    os.close(fd)
    print("MEMORY open")
except OSError as exc:
    print("MEMORY refused:", exc)
"""
KILL_SERVER = """#attack
import signal
os.kill(os.getppid(), signal.SIGKILL)
"""


@pytest.fixture(scope="module")
def image(tmp_path_factory, bwrap_cls) -> tuple[list[Path], Path]:
    """The prepared image's layers and a host folder with judge.py (the "runtime")."""
    task = Task.create("test/warm-judge", {"version": "1.0", "environment": {"build_timeout_sec": 600.0}},
                       "judge", {"environment/Dockerfile": DOCKERFILE, "tests/test.sh": "#!/bin/bash\nexit 0\n"})
    backend = bwrap_cls()
    prepared = asyncio.run(backend.prepare(task))
    runtime = tmp_path_factory.mktemp("judge-runtime")
    (runtime / "judge.py").write_text(JUDGE)
    os.chmod(runtime, 0o755)
    os.chmod(runtime / "judge.py", 0o644)
    return [Path(p) for p in prepared.details.lower], runtime


COMMAND = WarmCommand(script=f"{RUNTIME}/judge.py", args=(f"{WARM_INPUTS}/app/answer.txt",), preload=("json",),
                      inputs=("/app/answer.txt",))
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp"}


@contextlib.contextmanager
def server(image: tuple[list[Path], Path], weaken: frozenset[str] = frozenset()) -> Iterator[WarmServer]:
    """A started server on the judge's image, closed after the test."""
    lower, runtime = image
    warm = WarmServer(lower, COMMAND, env=ENV, mounts={RUNTIME: runtime}, memory_mb=512, pids=256,
                      limits=Limits(), storage_mb=64, weaken=weaken)
    warm.start()
    try:
        yield warm
    finally:
        warm.close()


def ask(warm: WarmServer, answer: str, timeout: float = 120.0):
    return warm.run(tests={"test.sh": (b"#!/bin/bash\n", True)}, inputs={"/app/answer.txt": answer.encode()},
                    env=ENV, timeout=timeout)


def judged(outcome) -> dict:
    line = next(ln for ln in outcome.stdout.decode().splitlines() if ln.startswith("JUDGE "))
    return json.loads(line[len("JUDGE "):])


def paid(outcome) -> bool:
    return outcome.logs.get("reward.txt", b"").strip() == b"1"


def test_requests_are_judged_in_turn_by_one_interpreter(image):
    with server(image) as warm:
        first, second, third = (ask(warm, answer) for answer in ("42", "41", "42"))
        assert [paid(o) for o in (first, second, third)] == [True, False, True]
        assert all(o.exit_code == 0 and not o.timed_out for o in (first, second, third))
        assert judged(second) == {"others": [], "tmp": [], "shm": [], "helper": 0, "who": None}
        assert warm.requests == 3 and not warm.closed


@pytest.mark.parametrize("weaken", [frozenset(), frozenset({"sweep"})], ids=["held", "control-no-sweep"])
def test_a_process_left_behind_does_not_reach_the_next_request(image, weaken):
    with server(image, weaken) as warm:
        ask(warm, DAEMON)
        honest = ask(warm, "41")
        if weaken:  # the daemon lived on into the next request and wrote its reward
            assert judged(honest)["others"] and paid(honest)
        else:
            assert judged(honest)["others"] == [] and not paid(honest)


@pytest.mark.parametrize("weaken", [frozenset(), frozenset({"readonly"})], ids=["held", "control-writable-root"])
def test_a_rewritten_module_or_a_file_in_dev_does_not_reach_the_next_request(image, weaken):
    with server(image, weaken) as warm:
        attack = ask(warm, POISON)
        honest = ask(warm, "41")
        said = attack.stdout.decode()
        if weaken:
            assert "POISON written /opt/mods/helper.py" in said and "POISON written /dev/verdict" in said
            assert judged(honest)["helper"] == 1 and paid(honest)
        else:
            for path in ("/opt/mods/helper.py", "/dev/verdict"):
                assert f"POISON refused {path} [Errno 30] Read-only file system" in said, said
            assert judged(honest)["helper"] == 0 and not paid(honest)


@pytest.mark.parametrize("weaken", [frozenset(), frozenset({"reset"})], ids=["held", "control-no-reset"])
def test_files_left_in_tmp_and_shm_do_not_reach_the_next_request(image, weaken):
    with server(image, weaken) as warm:
        assert "LEFT both" in ask(warm, LEAVE_FILES).stdout.decode()  # both folders are writable
        honest = ask(warm, "41")
        seen = judged(honest)
        if weaken:
            assert seen["tmp"] == ["verdict"] and seen["shm"] == ["verdict"] and paid(honest)
        else:
            assert seen["tmp"] == [] and seen["shm"] == [] and not paid(honest)


@pytest.mark.parametrize("weaken", [frozenset(), frozenset({"dumpable"})], ids=["held", "control-dumpable"])
def test_a_request_cannot_open_the_servers_memory(image, weaken):
    with server(image, weaken) as warm:
        said = ask(warm, MEMORY).stdout.decode()
        assert ("MEMORY open" in said) if weaken else ("MEMORY refused" in said and "Permission denied" in said)


def test_a_request_that_kills_the_server_is_left_to_test_sh_and_the_next_gets_a_new_one(image):
    pool = WarmPool(limit=2)
    lower, runtime = image

    def make() -> WarmServer:
        return WarmServer(lower, COMMAND, env=ENV, mounts={RUNTIME: runtime}, memory_mb=512, pids=256,
                          limits=Limits(), storage_mb=64)

    request = {"tests": {"test.sh": (b"#!/bin/bash\n", True)}, "env": ENV, "timeout": 120.0}
    try:
        assert pool.run("k", make, inputs={"/app/answer.txt": KILL_SERVER.encode()}, **request) is None
        after = pool.run("k", make, inputs={"/app/answer.txt": b"42"}, **request)
        assert after is not None and paid(after)
        assert pool.started == 2 and pool.served == 1
    finally:
        pool.close()


def test_a_request_past_its_timeout_ends_with_its_server(image):
    with server(image) as warm:
        jail_dir = warm.jail.dir
        outcome = ask(warm, "#attack\nimport time\ntime.sleep(3600)\n", timeout=3.0)
        assert outcome is not None and outcome.timed_out and outcome.exit_code is None
        assert warm.closed and not jail_dir.exists()  # its jail, processes and mounts are gone


def test_tasks_built_alike_share_one_interpreter_and_each_sees_its_own_files(image, bwrap_cls):
    """Two images from one Dockerfile whose last layer copies each task's own /app: that layer is left
    out of the interpreter's root (split_layers), and each request gets its task's /app."""
    backend = bwrap_cls()
    dockerfile = DOCKERFILE + "COPY app/ /app/\n"
    layers = []
    for who in ("alice", "bob"):
        task = Task.create(f"test/warm-judge-{who}", {"version": "1.0", "environment": {"build_timeout_sec": 600.0}},
                           "judge", {"environment/Dockerfile": dockerfile, "environment/app/who.txt": who,
                                     "tests/test.sh": "#!/bin/bash\nexit 0\n"})
        layers.append([Path(p) for p in asyncio.run(backend.prepare(task)).details.lower])
    command = WarmCommand(script=COMMAND.script, args=COMMAND.args, preload=COMMAND.preload, inputs=COMMAND.inputs,
                          task_paths=("/app",))
    (alice_shared, alice_own), (bob_shared, bob_own) = (split_layers(lower, command.task_paths) for lower in layers)
    assert alice_shared == bob_shared and alice_own and alice_own[0] != bob_own[0]  # WORKDIR /app and the COPY
    assert split_layers(layers[0], ("/srv",)) == (layers[0], [])  # a layer outside the task paths stays
    _, runtime = image
    pool = WarmPool(limit=1)

    def make() -> WarmServer:
        return WarmServer(alice_shared, command, env=ENV, mounts={RUNTIME: runtime}, memory_mb=512, pids=256,
                          limits=Limits(), storage_mb=64)

    request = {"tests": {"test.sh": (b"#!/bin/bash\n", True)}, "inputs": {"/app/answer.txt": b"41"}, "env": ENV,
               "timeout": 120.0}
    try:
        seen = [judged(pool.run("shared", make, image=lower, **request))["who"] for lower in (*layers, layers[0])]
        assert seen == ["alice", "bob", "alice"] and pool.started == 1 and pool.served == 3
    finally:
        pool.close()


def test_a_server_that_cannot_start_leaves_the_verification_cold_and_says_why(image):
    lower, runtime = image
    broken = WarmCommand(script=COMMAND.script, args=COMMAND.args, preload=("no_such_module_here",),
                         inputs=COMMAND.inputs)
    pool = WarmPool(limit=2)

    def make() -> WarmServer:
        return WarmServer(lower, broken, env=ENV, mounts={RUNTIME: runtime}, memory_mb=512, pids=256,
                          limits=Limits(), storage_mb=64)

    try:
        assert pool.run("k", make, tests={"test.sh": (b"#!/bin/bash\n", True)}, inputs={"/app/answer.txt": b"42"},
                        env=ENV, timeout=120.0) is None
        assert pool.failed == 1 and pool.started == 0 and "no_such_module_here" in pool.last_failure
        # the same key is not tried again: cold at once, no second failed start
        assert pool.run("k", make, tests={"test.sh": (b"#!/bin/bash\n", True)}, inputs={"/app/answer.txt": b"42"},
                        env=ENV, timeout=120.0) is None
        assert pool.failed == 1 and pool.started == 0
    finally:
        pool.close()


def test_a_task_path_that_is_a_link_in_the_image_is_not_followed_on_the_host(tmp_path):
    from autoenvscaling.sandbox.warm import _real_dir

    (tmp_path / "srv").symlink_to("/etc")  # an image whose /srv leads out of it, seen from the host
    (tmp_path / "app" / "data").mkdir(parents=True)
    assert (tmp_path / "srv").is_dir()  # the control: a check that follows links takes it for the image's folder
    assert _real_dir(tmp_path, "/srv/www") is None and _real_dir(tmp_path, "/srv") is None
    assert _real_dir(tmp_path, "/app/data") == tmp_path / "app" / "data" and _real_dir(tmp_path, "/nope") is None

"""The bwrap backend's id range, build-time registry access, failed-layer memo and ENTRYPOINT
services, on real sandboxes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

import pytest
from autoenvscaling.errors import BuildError, SandboxError
from autoenvscaling.sandbox.buildnet import CA_TARGET, host_ca_bundle
from autoenvscaling.sandbox.isolation import SANDBOX_UID
from autoenvscaling.tasks import TaskFile

from .conftest import make_task


def _prepare_and_run(backend, task, *commands, user=None, timeout=60):
    async def go():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            return prepared, [await sb.exec(c, user=user, timeout=timeout) for c in commands], sb
    return asyncio.run(go())


def test_files_keep_other_owners_and_user_restricts_access(backend):
    dockerfile = ("FROM debian:bookworm\n"
                  "RUN groupadd -g 4321 crew && useradd -m -u 1234 -G crew app && install -d -m 0770 -g crew /srv/crew "
                  "&& echo top > /root/secret && chmod 600 /root/secret && chgrp adm /var/log\n"
                  "COPY --chown=app notes.txt /home/app/notes.txt\n"
                  "USER app\nWORKDIR /home/app/work\n")
    task = make_task(dockerfile, files={"environment/notes.txt": "mine\n"}, name="ids")
    prepared, (as_app,), _ = _prepare_and_run(
        backend, task,
        "id -u; id -G; stat -c %u:%g /home/app/notes.txt /home/app/work; touch /srv/crew/ok && echo crew-ok; "
        "cat /root/secret || echo no-secret; touch /etc/evil || echo no-etc; echo hi > /home/app/mine && echo home-ok",
    )
    lines = as_app.stdout.split()
    # A non-root user sees ids other than its own as 65534 (bwrap nests a user namespace for it), but
    # the kernel checks the real ones: membership of crew opens /srv/crew.
    assert lines[:2] == ["1234", "1234"] and len(as_app.stdout.splitlines()[1].split()) == 2
    assert "1234:1234" in lines  # COPY --chown=app and WORKDIR under USER app, as BuildKit does
    assert {"crew-ok", "no-secret", "no-etc", "home-ok"} <= set(lines), as_app.tail()
    _, (root_view,), _ = _prepare_and_run(backend, task, "stat -c %u:%g /var/log /srv/crew; cat /root/secret",
                                          user="root")
    assert root_view.stdout.split() == ["0:4", "0:4321", "top"]
    # On the host every id is shifted into the unprivileged range.
    layer = next(p for p in map(__import__("pathlib").Path, prepared.details.lower) if (p / "srv/crew").exists())
    st = os.stat(layer / "srv/crew")
    assert (st.st_uid, st.st_gid) == (SANDBOX_UID, SANDBOX_UID + 4321)


def test_ids_beyond_the_range_are_a_sandbox_limit(backend):
    task = make_task("FROM debian:bookworm\nRUN touch /x && chown 70000 /x\n", name="ids-limit")
    with pytest.raises(BuildError, match="sandbox limit") as err:
        asyncio.run(backend.prepare(task))
    assert "docker" in (err.value.hint or "")
    # A USER's own chown of root's file fails under Docker too: the Dockerfile's mistake, said so.
    user = make_task("FROM debian:bookworm\nRUN useradd -m app\nUSER app\nRUN chown app /etc/hostname\n",
                     name="ids-user-chown")
    with pytest.raises(BuildError, match="RUN failed with exit code 1") as err:
        asyncio.run(backend.prepare(user))
    assert "sandbox limit" not in err.value.message and "fix that instruction" in (err.value.hint or "")


def test_build_steps_reach_the_registries_without_baking_in_the_ca(backend):
    if host_ca_bundle() is None:
        pytest.skip("this host has no CA bundle to share")
    dockerfile = ("FROM python:3.11-slim-bookworm\n"  # python3 and the CA store, as in the real image
                  f'RUN test "$SSL_CERT_FILE" = {CA_TARGET} && test -s "$PIP_CERT" && '
                  "python3 -c \"import urllib.request; urllib.request.urlopen('https://pypi.org/simple/six/', timeout=60)\" "
                  "&& echo reached > /reached\n")
    task = make_task(dockerfile, name="buildnet")
    prepared, (probe,), _ = _prepare_and_run(
        backend, task, "cat /reached; echo ${SSL_CERT_FILE:-unset} ${PIP_CERT:-unset}; "
                       "ls /dev/.autoenvscaling-build 2>/dev/null || echo no-ca-dir")
    assert probe.stdout.split() == ["reached", "unset", "unset", "no-ca-dir"], probe.tail()
    assert "SSL_CERT_FILE" not in prepared.env
    for layer in prepared.details.lower:  # nothing of the CA landed in any layer
        assert not os.path.exists(os.path.join(layer, "dev/.autoenvscaling-build"))


def test_a_failed_layer_is_built_once_per_batch(bwrap_cls):
    # A backend of its own (the memory of failed layers lives as long as its store) on the shared cache,
    # whose base root is built already: the unique marker keeps the failing layer this test's own.
    backend = bwrap_cls()
    marker = f"/tmp/aes-memo-{os.getpid()}-{time.time_ns()}"
    # The step fails (exit 3) and leaves a mark on the host only through its output.
    failing = f"FROM debian:bookworm\nRUN echo building {marker} && exit 3\n"
    first, second = make_task(failing, name="memo-a"), make_task(failing + "WORKDIR /app\n", name="memo-b")

    async def go():
        errors = []
        for task in (first, second):
            try:
                await backend.prepare(task)
            except BuildError as exc:
                errors.append(str(exc))
        return errors

    one, two = asyncio.run(go())
    # The second error comes from the batch's memory, raised before any build (not from a second run).
    assert "exit code 3" in one and "already failed in this batch" in two and "already failed" not in one
    assert marker in two  # the remembered error keeps the first build's output tail


ENTRY = "FROM python:3.11-slim-bookworm\nCOPY start.sh /start.sh\nENTRYPOINT [\"/start.sh\"]\n"  # python3 serves


def test_entrypoint_service_survives_commands_and_timeouts_but_not_the_attempt(backend):
    marker = f"aes-entry-{os.getpid()}-{time.time_ns()}"
    start = ("#!/bin/sh\necho starting\n"
             f"python3 -c 'import http.server as h; h.HTTPServer((\"127.0.0.1\", 8080), h.SimpleHTTPRequestHandler)"
             f".serve_forever()' {marker} >/dev/null 2>&1 &\nexec \"$@\"\n")
    task = make_task(ENTRY, files={"environment/start.sh": TaskFile(data=start.encode(), executable=True)}, name="entry-ok")
    # the service starts beside the first command: poll for it (up to a minute, for a loaded machine), as a
    # client of a booting service would
    fetch = ("python3 -c \"import time, urllib.request\nfor _ in range(600):\n    try:\n"
             "        print(urllib.request.urlopen('http://127.0.0.1:8080/', timeout=30).status)\n        break\n"
             "    except OSError:\n        time.sleep(0.1)\"")

    def running() -> bool:
        return marker in subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True).stdout

    async def go():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            first = await sb.exec(fetch)
            slow = await sb.exec("sleep 30", timeout=1)
            again = await sb.exec(fetch)
            alive = running()
            return first, slow, again, sb.entrypoint_output(), alive

    first, slow, again, output, alive = asyncio.run(go())
    assert first.stdout.strip() == "200" and slow.timed_out and again.stdout.strip() == "200"
    assert "starting" in output and alive
    assert not running()  # closing the attempt ends its ENTRYPOINT's services


def test_a_task_with_a_healthcheck_is_not_held_for_the_entrypoints_quiet_time(backend):
    """The start waits for the entrypoint to reach the container's command, then for 0.3 s without
    change; a task with [environment.healthcheck] (which the trial runs next) skips the second wait."""
    start = ("#!/bin/sh\npython3 -c 'import http.server as h; h.HTTPServer((\"127.0.0.1\", 8080), "
             "h.SimpleHTTPRequestHandler).serve_forever()' >/dev/null 2>&1 &\nexec \"$@\"\n")
    files = {"environment/start.sh": TaskFile(data=start.encode(), executable=True)}
    declared = make_task(ENTRY, files=files, environment={"healthcheck": {"command": "true"}}, name="entry-declared")
    undeclared = make_task(ENTRY, files=files, name="entry-undeclared")  # the positive control

    async def go(task):
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            return sb.settled, await sb.exec("echo ok")

    assert asyncio.run(go(undeclared))[0] == "quiet"
    settled, ran = asyncio.run(go(declared))
    assert settled == "healthcheck" and ran.ok and ran.stdout.strip() == "ok"


@pytest.mark.parametrize("checked", [True, False], ids=["busy-checked", "control-busy-unchecked"])
def test_a_service_still_starting_is_waited_for_before_the_first_command(backend, monkeypatch, checked):
    """A service that works for 3 s before it listens (its imports on a loaded machine): its
    processes and ports do not change meanwhile, but it is running, so the start waits for it and the
    first command reaches it at once. The control, without the check of running processes, settles
    after 0.3 s of no change and the same command finds nothing listening (a full run failed a
    fixture's oracle on that); its service works for two minutes, so the refusal races nothing on a
    loaded machine (the attempt's end stops it)."""
    import autoenvscaling.sandbox.bwrap as bwrap_module

    if not checked:
        monkeypatch.setattr(bwrap_module, "_running", lambda pids: False)
    start = ("#!/bin/sh\n"
             "python3 -c 'import time, http.server as h\n"
             f"end = time.time() + {3 if checked else 120}\n"
             "while time.time() < end: pass\n"
             "h.HTTPServer((\"127.0.0.1\", 8080), h.SimpleHTTPRequestHandler).serve_forever()' >/dev/null 2>&1 &\n"
             "exec \"$@\"\n")
    task = make_task(ENTRY, files={"environment/start.sh": TaskFile(data=start.encode(), executable=True)},
                     name="entry-busy-start")
    once = "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8080/', timeout=10).status)\""

    async def go():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            return sb.settled, await sb.exec(once)

    settled, ran = asyncio.run(go())
    assert settled == "quiet"
    if checked:
        assert ran.ok and ran.stdout.strip() == "200", ran.stderr[-500:]
    else:
        assert not ran.ok and "Connection refused" in ran.stderr, (ran.stdout, ran.stderr[-500:])


def test_entrypoint_that_exits_is_a_sandbox_error_with_its_output(backend):
    start = "#!/bin/sh\necho 'cannot open /etc/app.conf' >&2\nexit 4\n"
    task = make_task(ENTRY, files={"environment/start.sh": TaskFile(data=start.encode(), executable=True)}, name="entry-bad")

    async def go():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared):
            pass

    with pytest.raises(SandboxError, match=r"exited with code 4 .*cannot open /etc/app.conf"):
        asyncio.run(go())


def test_attempts_do_not_share_a_network(backend):
    """Each attempt has its own loopback: an ENTRYPOINT service of one attempt is unreachable from
    another attempt of the same task, and a listener a command left behind is gone with it."""
    start = ("#!/bin/sh\npython3 -c 'import http.server as h; h.HTTPServer((\"127.0.0.1\", 8080), "
             "h.SimpleHTTPRequestHandler).serve_forever()' >/dev/null 2>&1 &\nexec \"$@\"\n")
    served = make_task(ENTRY, files={"environment/start.sh": TaskFile(data=start.encode(), executable=True)},
                       name="net-a")
    plain = make_task("FROM python:3.11-slim-bookworm\n", name="net-b")

    def probe(tries: int) -> str:
        """'open' once port 8080 answers (polling: a service may still be starting), else 'closed'."""
        return ("python3 -c \"import socket, time\nfor _ in range(%d):\n    s = socket.socket(); s.settimeout(30)\n"
                "    if s.connect_ex(('127.0.0.1', 8080)) == 0:\n        print('open'); break\n"
                "    s.close(); time.sleep(0.1)\nelse:\n    print('closed')\"" % tries)

    async def go():
        pa, pb = await backend.prepare(served), await backend.prepare(plain)
        async with await backend.create(served, pa) as a, await backend.create(plain, pb) as b:
            # The listener is up before the command ends (and leaves it behind).
            left = await b.exec("setsid python3 -m http.server 8080 --bind 127.0.0.1 >/dev/null 2>&1 & " + probe(600))
            return (await a.exec(probe(600))).stdout.strip(), (await b.exec(probe(1))).stdout.strip(), left

    in_a, in_b, left = asyncio.run(go())
    assert left.ok and left.stdout.strip() == "open" and in_a == "open" and in_b == "closed"

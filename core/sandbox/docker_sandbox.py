"""The docker backend's sandbox (docker_backend.py): one attempt as a long-lived container that every
command is an exec into, its init, the wrapper that sweeps what a command left behind, and the
archive endpoint for files. Why it is built this way: docker_backend.py."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
import uuid
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from ..archive import make_tar, symlink_tar, unpadded_tar
from ..errors import SandboxError
from ..tasks import Task
from . import docker_verify
from .base import ARCHIVE_LIMIT, DEFAULT_OUTPUT_LIMIT, ExecResult, FileChange, PreparedEnvironment, Sandbox
from .compose_group import ComposeGroup
from .docker_images import docker_errors, short_error
from .docker_shared import EACH_PROCESS, SWEEP

if TYPE_CHECKING:
    from .docker_backend import DockerBackend

SWEEP_TIMEOUT = 30.0
INSPECT_TRIES = 5  # an inspect racing a container's exit is retried this often
SETTLE_SECONDS = 0.25  # the ready-time process set is taken once it stays the same this long
READY_MARKER = "/dev/.autoenvscaling-ready"

# The init: open a fifo read-write (so reads block forever), unlink it, say it runs, then wait on
# the fifo. It installs no signal handler, so as pid 1 nothing inside can stop it (pid 1 ignores
# signals it does not handle); the engine stops it with SIGKILL (stop_signal), so removing the
# container never waits.
INIT = ("f=/dev/.autoenvscaling-init-$$; mkfifo \"$f\" && exec 3<>\"$f\" && rm -f \"$f\" || exit 1; "
        f": > {READY_MARKER}; while :; do read -r _ <&3; done")
LAUNCH = f"if command -v bash >/dev/null 2>&1; then exec bash -c {shlex.quote(INIT)}; fi; {INIT}"
# The processes running now, as "pid:starttime ..." (the sweep, docker_shared.py, spares these).
_SNAPSHOT = EACH_PROCESS + 'printf "%s:%s " "$p" "${20}"; done'
# The command wrapper: $1 command, $2 working directory, $3 file to read stdin from ("" = none),
# $4 the sandbox's own processes ("pid:start ...", "" = none).
_WRAPPER = (f'spare=$4; cd -- "$2" || exit 1; if command -v bash >/dev/null 2>&1; then s=bash; else s=sh; fi; '
            f'if [ -n "$3" ]; then "$s" -c "$1" <"$3"; rc=$?; rm -f -- "$3"; else "$s" -c "$1" </dev/null; rc=$?; fi; '
            f'{SWEEP}; exit $rc')
PROBE = ("grep -E '^(CapBnd|NoNewPrivs):' /proc/self/status; "
         "for f in memory.max memory/memory.limit_in_bytes pids.max pids/pids.max; do "
         "[ -r /sys/fs/cgroup/$f ] && echo \"$f: $(cat /sys/fs/cgroup/$f)\"; done; true")


class DockerSandbox(Sandbox):
    """One attempt: a container (and, for a compose task, its sidecars and network) that lives from
    ``start`` to ``close``."""

    def __init__(self, backend: DockerBackend, task: Task, prepared: PreparedEnvironment) -> None:
        self.backend = backend
        self.task = task
        self.prepared = prepared
        self.workdir = prepared.workdir
        self.container_id: str | None = None
        self.group: ComposeGroup | None = None
        self.spare = ""  # the sandbox's own processes ("pid:start ..."), which sweeps leave alone
        self.entrypoint_log = ""  # the tail of what the image's ENTRYPOINT printed while starting
        self.notes: list[str] = []
        self._ready = False
        self._closed = False
        # One command at a time (the wrapper's sweep kills everything else); docker_verify.py holds it
        # while it puts files back and sweeps.
        self.exec_lock = asyncio.Lock()
        self._start_lock = asyncio.Lock()

    @property
    def container(self) -> str:
        """The id of the sandbox's own container, once it started."""
        if self.container_id is None:
            raise SandboxError("this sandbox has no container: start it first")
        return self.container_id

    async def start(self) -> None:
        if self._ready:
            return
        async with self._start_lock:
            if self._ready:
                return
            if self._closed:
                raise SandboxError("this sandbox was closed; create a new one")
            compose = self.prepared.details.compose
            try:
                if compose is not None:
                    self.group = ComposeGroup(self.backend, self.task, compose)
                    await self.group.up(self._start_main)
                else:
                    await self._start_main({}, [])
            except BaseException:
                await asyncio.shield(self._teardown())  # nothing of a failed start stays behind
                raise
            self._ready = True
        if not self.backend._observed.get("capabilities dropped"):
            probe = await self.exec(PROBE, timeout=30, user="0")
            if not probe.ok:
                raise SandboxError(f"the container does not run commands: {probe.tail(200) or probe.exit_code}")
            await self.backend.call(self.backend.observe, self.container_id, probe.stdout,
                                    self.backend.policy.network_for(self.task), what="inspect container")

    async def _start_main(self, extra: dict[str, Any], files: list[tuple[str, bytes]]) -> str:
        """Create and start the sandbox's own container (with a compose group's network settings in
        ``extra``) and wait until its ENTRYPOINT has run the init."""
        settings = self.backend.container_settings(self.task, self.prepared)
        if extra:
            environment = {**extra.pop("environment", {}), **settings["environment"]}  # the task's env wins
            settings.pop("network_mode")
            settings.update(extra, environment=environment)
        self.container_id = await self.backend.call(self.backend.create_container, settings, files,
                                                    what="start container")
        await self._await_ready()
        return self.container_id

    async def _await_ready(self) -> None:
        """With an ENTRYPOINT: wait for the init's marker (the entrypoint ran ``exec "$@"``), then
        take the processes alive once they settle as the sandbox's own. The entrypoint exiting is
        an error quoting its last line; one that never runs its arguments is waited for
        ``backend.ready_timeout``, then accepted as it is (Docker runs such images too)."""
        if not self.prepared.details.entrypoint:
            return
        deadline = time.monotonic() + self.backend.ready_timeout
        probe = f"[ -e {READY_MARKER} ] || {{ echo waiting; exit 0; }}; {_SNAPSHOT}"
        # Settled: two snapshots in a row alike, each listing pid 1. A first snapshot alone is not
        # enough: on a busy machine one came back empty (not even pid 1), and taking it as the set
        # to spare let the first command's sweep kill the entrypoint's service.
        previous: str | None = None
        settle_until = 0.0
        # The init ran the container's command: a probe found its marker (and listed pid 1; an
        # answer lost on a busy machine says nothing either way).
        commanded = noted = False
        while True:
            await self._check_alive()
            probing = time.monotonic() < deadline
            out = await self._raw(probe if probing else _SNAPSHOT)
            if out.startswith("waiting"):
                await asyncio.sleep(0.1)
                continue
            listed = out.startswith("1:") or " 1:" in out
            commanded = commanded or (probing and listed)
            if not probing and not commanded and not noted:
                noted = True
                self.notes.append(f"the image's ENTRYPOINT did not run the container's command within "
                                  f"{self.backend.ready_timeout:g}s: its processes are kept, the init does not run")
            settle_until = settle_until or time.monotonic() + 8 * SETTLE_SECONDS
            if listed and (out == previous or time.monotonic() > settle_until):
                break
            if not listed and time.monotonic() > deadline + 8 * SETTLE_SECONDS:
                break  # nothing better will come: keep what there is
            previous = out
            await asyncio.sleep(SETTLE_SECONDS)
        self.spare = " ".join(entry for entry in out.split() if not entry.startswith("1:"))
        self.entrypoint_log = await self.backend.call(self.backend.logs_tail, self.container_id, what="container logs")

    async def _raw(self, script: str) -> str:
        """Run a root shell script in the container without the wrapper (no sweep) and return its output."""
        api = self.backend.client.api
        try:
            created = await self.backend.call(api.exec_create, self.container_id, ["sh", "-c", script], user="0",
                                              what="exec")
            data = await self.backend.call(api.exec_start, created["Id"], what="exec")
        except SandboxError:
            await self._check_alive()  # a container that stopped meanwhile says why
            raise
        return data.decode("utf-8", errors="replace").strip()

    async def _check_alive(self) -> None:
        """Raise, quoting the container's last output line, when it is no longer running."""
        for attempt in range(INSPECT_TRIES):
            try:
                info = await self.backend.call(self.backend.client.api.inspect_container, self.container_id,
                                               what="inspect container")
                break
            except SandboxError:
                # podman's inspect can fail while the container's last process exits ("read
                # /proc/<pid>/cgroup: no such process"): a moment later it reports the exit.
                if attempt == INSPECT_TRIES - 1:
                    raise
                await asyncio.sleep(0.2)
        state = info.get("State") or {}
        if state.get("Running"):
            return
        self.entrypoint_log = await self.backend.call(self.backend.logs_tail, self.container_id, what="container logs")
        lines = [line for line in self.entrypoint_log.splitlines() if line.strip()]
        last = lines[-1].strip()[:200] if lines else "no output"
        if not self._ready:
            raise SandboxError(f"the image's ENTRYPOINT exited with code {state.get('ExitCode')} at start: {last}",
                               hint='an ENTRYPOINT that starts services must end with exec "$@" '
                                    '(the container\'s command keeps the sandbox running)')
        raise SandboxError(f"the sandbox's container stopped (exit code {state.get('ExitCode')}); "
                           f"its last output: {last}", hint="the container's log is in sandbox.entrypoint_log")

    def entrypoint_output(self) -> str:
        return self.entrypoint_log

    async def exec(self, command: str, *, timeout: float = 60.0, env: Mapping[str, str] | None = None,
                   cwd: str | None = None, user: str | None = None, stdin: bytes | None = None,
                   output_limit: int = DEFAULT_OUTPUT_LIMIT) -> ExecResult:
        await self.start()
        async with self.exec_lock:
            stdin_path = ""
            if stdin is not None:
                name = f".autoenvscaling-stdin-{uuid.uuid4().hex}"
                await self._put_locked("/tmp", make_tar({name: (stdin, False)}))
                stdin_path = f"/tmp/{name}"
            user = user or self.prepared.user or "0"
            result = await self._run(command, timeout=timeout, env=env, cwd=cwd or self.workdir, user=user,
                                     stdin_path=stdin_path, limit=output_limit)
            if stdin_path and user not in ("0", "root"):  # /tmp is sticky: only root can remove it
                await self._run(f"rm -f -- {stdin_path}", timeout=30, limit=1024)
            return result

    async def _run(self, command: str, *, timeout: float, env: Mapping[str, str] | None = None, cwd: str = "/",
                   user: str = "0", stdin_path: str = "", limit: int = 4096) -> ExecResult:
        """Run one command under the wrapper (lock held; by default as root in /). Output is captured by a
        pool thread into a shared buffer, so a timeout still returns what was printed before it."""
        api = self.backend.client.api
        start = time.monotonic()
        try:
            created = await self.backend.call(
                api.exec_create, self.container_id,
                ["sh", "-c", _WRAPPER, "autoenvscaling", command, cwd, stdin_path, self.spare],
                environment=dict(env or {}), user=user, what="exec")
        except SandboxError:
            await self._check_alive()
            raise
        exec_id = created["Id"]
        capture = _Capture(limit)
        loop = asyncio.get_running_loop()
        reader = loop.run_in_executor(self.backend._pool, capture.drain, api, exec_id)
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.shield(reader), timeout)
        except asyncio.TimeoutError:
            timed_out = True
            await self._sweep()
            # The stream ends once the sweep is done; if the engine keeps it open (or breaks it), the
            # output captured so far is what we return.
            with contextlib.suppress(asyncio.TimeoutError, docker_errors().DockerException):
                await asyncio.wait_for(reader, SWEEP_TIMEOUT)
        except docker_errors().DockerException as exc:
            raise SandboxError(f"exec failed: {short_error(exc)}") from exc
        except asyncio.CancelledError:
            # The caller gave up: the command must not outlive this call (nor collide with the next).
            await asyncio.shield(self._sweep())
            raise
        exit_code: int | None = None
        if not timed_out:
            exit_code = await self._exit_code(exec_id)
        return ExecResult(command=command, exit_code=exit_code, stdout=capture.text(capture.stdout),
                          stderr=capture.text(capture.stderr), seconds=time.monotonic() - start,
                          timed_out=timed_out, truncated=capture.truncated)

    async def _exit_code(self, exec_id: str) -> int | None:
        api = self.backend.client.api
        for _ in range(50):  # the engine may record the exit a moment after the stream ends
            info = await self.backend.call(api.exec_inspect, exec_id, what="exec inspect")
            if not info.get("Running"):
                return info.get("ExitCode")
            await asyncio.sleep(0.02)
        return None

    async def _sweep(self) -> None:
        """Kill every process but pid 1 and the sandbox's own, as root, from a separate exec (after a
        timeout)."""
        api = self.backend.client.api
        created = await self.backend.call(api.exec_create, self.container_id,
                                          ["sh", "-c", f"spare=$1; {SWEEP}", "sweep", self.spare], user="0",
                                          what="sweep")
        await self.backend.call(api.exec_start, created["Id"], timeout=SWEEP_TIMEOUT, what="sweep")

    async def put_archive(self, remote_dir: str, data: bytes) -> None:
        await self.start()
        async with self.exec_lock:
            await self._put_locked(remote_dir, data)

    async def _put_locked(self, remote_dir: str, data: bytes) -> None:
        api = self.backend.client.api
        not_found = docker_errors().NotFound

        def put() -> bool | None:
            try:
                return bool(api.put_archive(self.container_id, remote_dir, unpadded_tar(data)))
            except not_found:
                return None

        what = f"upload to {remote_dir}"
        ok = await self.backend.call(put, what=what)
        if ok is None:  # Docker wants the directory to exist (podman creates it): make it, once
            made = await self._run(f"mkdir -p -- {shlex.quote(remote_dir)}", timeout=60)
            if not made.ok:
                raise SandboxError(f"cannot create {remote_dir} in the sandbox: {made.tail(200)}")
            ok = await self.backend.call(put, what=what)
        if not ok:
            raise SandboxError(f"the engine refused the upload to {remote_dir}")

    async def get_archive(self, remote_path: str) -> bytes:
        """The archive endpoint follows a final symlink (podman does, inside the container's root); we
        answer with the link itself instead, as ``tar -c`` would, so a planted link is never read
        through. The stat header tells, before the body is read."""
        await self.start()
        api = self.backend.client.api
        from docker.utils import decode_json_header

        def fetch() -> bytes | None:
            # The SDK's get_archive hides the response; we need its header before reading the body.
            res = api._get(api._url("/containers/{0}/archive", self.container_id), params={"path": remote_path},
                           stream=True)
            try:
                if res.status_code == 404:
                    return None
                api._raise_for_status(res)
                stat = decode_json_header(res.headers.get("X-Docker-Container-Path-Stat") or "e30=")  # "{}"
                if int(stat.get("mode") or 0) & docker_verify.GO_SYMLINK:
                    return symlink_tar(PurePosixPath(remote_path).name, str(stat.get("linkTarget") or ""))
                out = bytearray()
                for chunk in res.iter_content(1 << 16, False):
                    out += chunk
                    if len(out) > ARCHIVE_LIMIT:
                        raise SandboxError(f"{remote_path} is larger than {ARCHIVE_LIMIT >> 20} MiB")
                return bytes(out)
            finally:
                res.close()

        data = await self.backend.call(fetch, what=f"download {remote_path}", timeout=None)
        if data is None:
            raise FileNotFoundError(remote_path)
        return data

    # -- verification (docs/verification.md): through the engine alone, see docker_verify.py ------
    verifier_view = True

    async def end_agent_processes(self) -> bool:
        await self.start()
        return await docker_verify.end_agent_processes(self)

    async def changes(self) -> list[FileChange]:
        await self.start()
        return await docker_verify.changes(self)

    async def restore(self, paths: Sequence[str]) -> None:
        await self.start()
        await docker_verify.restore(self, paths)

    async def close(self) -> None:
        self._closed = True
        await self._teardown()

    async def _teardown(self) -> None:
        """Remove the container, then the compose group's sidecars, volumes and network."""
        self._ready = False
        container_id, self.container_id = self.container_id, None
        group, self.group = self.group, None
        try:
            if container_id is not None:
                await self.backend.call(self.backend.remove_container, container_id, what="remove container")
        finally:
            if group is not None:
                await group.down()


class _Capture:
    """Reads an exec's demultiplexed stream, keeping at most ``limit`` bytes of stdout+stderr."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.truncated = False

    def drain(self, api: Any, exec_id: str) -> None:
        for out, err in _exec_frames(api, exec_id):
            for buf, chunk in ((self.stdout, out), (self.stderr, err)):
                if chunk:
                    room = self.limit - len(self.stdout) - len(self.stderr)
                    if len(chunk) > room:
                        self.truncated = True
                    if room > 0:
                        buf += chunk[:room]

    @staticmethod
    def text(data: bytearray) -> str:
        return bytes(data).decode("utf-8", errors="replace")


def _exec_frames(api: Any, exec_id: str) -> Iterator[tuple[bytes | None, bytes | None]]:
    """The (stdout, stderr) frames of a started exec, read from the buffered reader over the socket.
    The SDK reads the hijacked stream from the raw socket under that reader, and so loses what the
    engine sent in the same packet as the response headers: podman sends a command's output right
    away, and on a loaded machine a short command's whole output came with the headers (about one
    exec in three returned nothing). Other transports (ssh, named pipes) keep the SDK's reader."""
    if api.base_url.startswith(("http+docker://ssh", "http+docker://localnpipe", "https://")):
        yield from api.exec_start(exec_id, stream=True, demux=True)
        return
    res = api._post_json(api._url("/exec/{0}/start", exec_id), headers={"Connection": "Upgrade", "Upgrade": "tcp"},
                         data={"Tty": False, "Detach": False}, stream=True)
    api._raise_for_status(res)
    reader = res.raw._fp.fp  # buffered: what came with the headers first, then the socket
    try:
        while True:
            header = reader.read(8)
            if len(header) < 8:
                return
            size = int.from_bytes(header[4:8], "big")
            data = reader.read(size) if size else b""
            yield (data, None) if header[0] != 2 else (None, data)
    finally:
        res.close()

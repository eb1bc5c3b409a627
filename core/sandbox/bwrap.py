"""The default sandbox backend on Linux: bubblewrap over copy-on-write root filesystems.

``prepare`` builds the task's environment/Dockerfile into shared, cached layers (bwrap_build.py).
``create`` gives one attempt its own writable layer: a size-capped tmpfs upper directory of an
overlay whose lower layers are the prepared stack, mounted once at ``start`` (jail.py). Every exec
then runs bwrap through the launch chain of launcher.py (ids 0-65535 inside are SANDBOX_UID + id on
the host) with fresh pid, ipc, uts and cgroup namespaces, a new /proc and /dev, a clean environment
and no network but the attempt's own loopback unless the policy grants the task's request. When an exec
returns (or times out) its pid namespace is gone, so nothing it started survives, setsid'd daemons
included. The one exception is the image's ENTRYPOINT: it is started at sandbox start, as Docker
starts it, with the arguments Harbor's containers get (``sh -c "sleep infinity"``), runs in its own
pid namespace for the whole attempt, shares the attempt's loopback (so its services answer every
command), and its output is kept (``entrypoint_output``).
Files move in and out by running tar *inside* the sandbox, so a symlink planted by the agent can never
redirect a host-side read or write. Verification (docs/verification.md) reads the attempt's changes
from its overlay upper layer on the host and puts paths back with the pristine image's own tools
(``Jail.run_trusted``), never with the agent's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import stat
import time
import weakref
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..archive import named_files
from ..errors import MissingPrerequisite, SandboxError
from ..tasks import Task
from . import warm
from .base import (ARCHIVE_LIMIT, DEFAULT_OUTPUT_LIMIT, ExecResult, FileChange, PreparedEnvironment, Protection,
                   Sandbox, SandboxBackend, SandboxPolicy, WarmCommand, absolute, argv_chunks)
from .bwrap_build import build_environment, plan_build
from .isolation import (DEFAULT_PATH, FILE_TIMEOUT, HOSTNAME, INSTALL_HINT, SANDBOX_UID, TRUSTED_TARGET, UID_RANGE,
                        cleanup_stale, host_facts)
from .jail import Jail, Service
from .launcher import Identity, limits_for
from .rootfs import LayerStore, base_rootfs_built

_PUT = 'mkdir -p -- "$1" && exec tar -x -f - -C "$1" --no-same-owner'
_GET = 'cd -- "$1" 2>/dev/null || exit 44; [ -e "$2" ] || [ -L "$2" ] || exit 44; exec tar -c -f - -- "$2"'
# Several names in one folder: those that exist (or are links), in one archive; 44 when none does.
_GET_MANY = ('cd -- "$1" 2>/dev/null || exit 44; shift; n=$#; while [ "$n" -gt 0 ]; do '
             'if [ -e "$1" ] || [ -L "$1" ]; then set -- "$@" "$1"; fi; shift; n=$((n - 1)); done; '
             '[ "$#" -gt 0 ] || exit 44; exec tar -c -f - -- "$@"')
_MISSING = 44
_cleaned = False
# The arguments Harbor's compose file gives the main container; an ENTRYPOINT ending in `exec "$@"`
# then idles like any other task container.
KEEPALIVE = ["sh", "-c", "sleep infinity"]
ENTRYPOINT_SETTLE = 20.0  # seconds a busy ENTRYPOINT gets before the attempt goes on without waiting
ENTRYPOINT_QUIET = 0.3  # seconds its processes and ports must stay unchanged, unless the task has a healthcheck


def _running(pids: frozenset[int]) -> bool:
    """Whether any of ``pids`` is running or in uninterruptible sleep (``R`` or ``D`` in
    /proc/PID/stat): still starting, not yet waiting for work."""
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2:][:1] in ("R", "D"):
            return True
    return False


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW  # opens a directory, never through a symlink
T = TypeVar("T")


class BwrapBackend(SandboxBackend):
    name = "bwrap"
    supports_gpus = True  # NVIDIA device nodes and driver libraries bound in (gpu.py)
    supports_internet = True  # the host's network namespace, when the policy grants it
    supports_browser = True  # a browser the image brings (Chromium) runs: writable HOME, /dev/shm, many processes

    def __init__(self, *, policy: SandboxPolicy | None = None, cache_dir: Path | None = None) -> None:
        super().__init__(policy=policy, cache_dir=cache_dir)
        self.store = LayerStore(self.cache_dir)
        self.warm = warm.WarmPool()  # warm verifier interpreters (warm.py), shared by this backend's attempts
        global _cleaned
        if not _cleaned and host_facts().root:
            # Mounts and cgroups of processes killed before they could close their sandboxes.
            cleanup_stale()
            self.store.cleanup_stale()
            _cleaned = True

    @classmethod
    def available(cls) -> tuple[bool, str]:
        facts = host_facts()
        missing = facts.missing()
        if facts.mmdebstrap is None and not base_rootfs_built():
            missing.append("mmdebstrap (to build the local base image)")
        if missing:
            return False, f"bwrap backend unavailable: missing {', '.join(missing)} ({INSTALL_HINT})"
        return True, ""

    def _require(self) -> None:
        ok, why = self.available()
        if not ok:
            raise MissingPrerequisite(why, hint=INSTALL_HINT + ", or use --backend docker")

    async def prepare(self, task: Task) -> PreparedEnvironment:
        plan = plan_build(task)  # refusals come before any prerequisite or build work
        self._require()
        return await build_environment(task, self.store, self.policy, plan)

    async def create(self, task: Task, prepared: PreparedEnvironment) -> "BwrapSandbox":
        if prepared.backend != self.name:
            raise SandboxError(f"environment was prepared by the {prepared.backend} backend, not bwrap")
        self._require()
        return BwrapSandbox(task, prepared, self.policy, warm_pool=self.warm)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.warm.close)

    def protections(self) -> list[Protection]:
        facts = host_facts()
        ns = facts.userns and facts.root
        net = ("granted to tasks that set allow_internet (policy network='task'); those share the host's "
               "network namespace, loopback included" if self.policy.network == "task"
               else "never granted (policy network='none')")
        kill = "pid namespace + --die-with-parent" + (" + cgroup.kill" if facts.kill_cgroup else "")
        limits = "fsize, nofile, nproc per process" + ("" if facts.memory_cgroup else ", address space = memory")
        if self.policy.cpu_seconds:
            limits += f", cpu {self.policy.cpu_seconds}s"
        return [
            Protection(name="unprivileged host uid", active=ns,
                       detail=f"ids 0-{UID_RANGE - 1} inside are host ids {SANDBOX_UID}-{SANDBOX_UID + UID_RANGE - 1} "
                              f"(root only inside its user namespace; USER accounts are unprivileged there too)"),
            Protection(name="pid/ipc/uts/cgroup/mount namespaces", active=ns,
                       detail="a user namespace per attempt; new pid/ipc/uts/cgroup/mount namespaces per command, "
                              "a fresh /proc and /dev; host processes are invisible"),
            Protection(name="loopback-only network", active=ns,
                       detail=f"the attempt's own network namespace, shared by its commands and its ENTRYPOINT "
                              f"(host 127.0.0.1 unreachable); internet {net}"),
            Protection(name="copy-on-write layer per attempt", active=facts.overlay and facts.root,
                       detail="overlayfs over the prepared layers; attempts never see each other's files"),
            Protection(name="storage cap", active=facts.root,
                       detail=f"the attempt's layer is a tmpfs of the task's storage_mb (at most "
                              f"{self.policy.max_storage_mb} MiB): ENOSPC inside, host disk untouched"),
            Protection(name="memory cgroup", active=facts.memory_cgroup is not None,
                       detail=(f"cgroup v1 limit = memory_mb + storage_mb (the tmpfs layer's pages count), "
                               f"memory_mb at most {self.policy.max_memory_mb} MiB") if facts.memory_cgroup
                       else "no writable memory controller; an address-space rlimit stands in"),
            Protection(name="pids cgroup", active=facts.pids_cgroup is not None,
                       detail=f"at most {self.policy.pids} processes per attempt" if facts.pids_cgroup
                       else "no writable pids controller; RLIMIT_NPROC is the only backstop"),
            Protection(name="rlimits", active=facts.root, detail=limits),
            Protection(name="no-leftover kill", active=ns, detail=kill),
            Protection(name="tamper-proof verification", active=ns and facts.overlay,
                       detail="the attempt's changes read on the host from its overlay layer; what the task's "
                              "verifier view hides put back by the pristine image's own rm and cp; verifier "
                              "runtimes bound read-only into the verifier's command alone (docs/verification.md)"),
            Protection(name="warm verifier jail", active=ns and facts.overlay and warm.enabled(),
                       detail="a runtime's program served by an interpreter that imported its modules once, in a "
                              "jail of its own: the image read-only, an unprivileged non-dumpable server, every "
                              "process of a request killed and its writable folders emptied before the next; "
                              "under the outputs view only (docs/verification.md#warm-verifier-interpreters)"
                              + ("" if warm.enabled() else f"; off ({warm.SWITCH}=0)")),
        ]


class BwrapSandbox(Sandbox):
    """One attempt: an overlay root with its own tmpfs layer and cgroups, execs serialised."""

    def __init__(self, task: Task, prepared: PreparedEnvironment, policy: SandboxPolicy, *,
                 warm_pool: "warm.WarmPool | None" = None) -> None:
        env_cfg = task.config.environment
        self.task, self.prepared, self.warm_pool = task, prepared, warm_pool
        self.workdir = env_cfg.workdir or prepared.workdir
        self.env = {"PATH": DEFAULT_PATH, "HOSTNAME": HOSTNAME, **prepared.env, **env_cfg.env}
        self.shell = "/bin/bash" if prepared.details.has_bash else "/bin/sh"
        # Floors: a tmpfs of size 0 would be unlimited, a memory limit of 0 unusable.
        self.jail = Jail([Path(p) for p in prepared.details.lower], memory_mb=max(policy.memory_for(task), 32),
                         pids=max(policy.pids, 8), limits=limits_for(policy), network=policy.network_for(task),
                         storage_mb=max(policy.storage_for(task), 8), devices=_gpu_args(task))
        self._lock = asyncio.Lock()
        self._users: dict[str | None, Identity] = {}
        self.entrypoint: Service | None = None
        self.settled = ""  # how start() found the ENTRYPOINT ready: "quiet", "healthcheck" or "deadline"
        # A sandbox dropped without close() still releases its mounts and cgroups.
        self._finalizer = weakref.finalize(self, self.jail.close)

    async def start(self) -> None:
        if self.jail.opened:
            return
        self.jail.open()
        if self.workdir != self.prepared.workdir:  # [environment].workdir the image may lack
            out = await self.jail.run(["mkdir", "-p", "--", self.workdir])
            if out.exit_code != 0:
                self._finalizer()  # a failed start leaves nothing behind (no __aexit__ follows it)
                why = out.stderr.decode(errors="replace")[-200:]
                raise SandboxError(f"cannot create workdir {self.workdir}: {why}")
        if self.prepared.details.entrypoint:
            try:
                await self._start_entrypoint(self.prepared.details.entrypoint)
            except BaseException:
                self._finalizer()
                raise

    async def _start_entrypoint(self, entrypoint: list[str]) -> None:
        """Run the image's ENTRYPOINT as the container's first process, then wait until it settled:
        it reached `sleep infinity` (exec "$@") or serves on a port, and its processes, ports and
        sleep stopped changing for ENTRYPOINT_QUIET seconds: a process still running (a service
        importing its modules before it listens) is not quiet, however long it takes on a loaded
        machine. A task that says when it is ready (``[environment.healthcheck]``, which the trial
        runs next, before the agent) is not held for the quiet time."""
        declared = self.task.config.environment.healthcheck is not None
        identity = await self._identity(None)
        self.entrypoint = await self.jail.spawn([*entrypoint, *KEEPALIVE], env={"HOME": identity.home, **self.env},
                                                cwd=self.workdir, identity=identity, name="entrypoint")
        deadline = time.monotonic() + ENTRYPOINT_SETTLE
        last, stable_since = None, time.monotonic()
        while True:
            await asyncio.sleep(0.05)
            if not self.entrypoint.running:
                await asyncio.sleep(0.05)  # let the reader take the last output
                lines = [ln for ln in self.entrypoint.output().splitlines() if ln.strip()]
                raise SandboxError(f"the image's ENTRYPOINT {' '.join(entrypoint)[:80]} exited with code "
                                   f"{self.entrypoint.exit_code} at sandbox start: {lines[-1][:200] if lines else 'no output'}",
                                   hint='an ENTRYPOINT must keep running or end with exec "$@" (the container '
                                        'command is sh -c "sleep infinity")')
            idle, listening, procs = self._entrypoint_state()
            state = (procs, listening)
            now = time.monotonic()
            if state != last or _running(procs):
                last, stable_since = state, now
            if (idle or listening) and (declared or now - stable_since >= ENTRYPOINT_QUIET):
                self.settled = "healthcheck" if declared else "quiet"
                return
            if now > deadline:
                self.settled = "deadline"
                return  # still running and still busy: a foreground service; carry on as Docker would

    def _entrypoint_state(self) -> tuple[bool, frozenset[str], frozenset[int]]:
        """(reached sleep infinity, listening sockets, processes) of the attempt, read from /proc."""
        procs = frozenset(self.jail.cgroups.pids_in())
        idle = False
        for pid in procs:
            try:
                idle = idle or Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\0infinity\0"
            except OSError:
                continue
        listening: set[str] = set()
        assert self.entrypoint is not None
        for table in ("tcp", "tcp6"):
            try:
                rows = Path(f"/proc/{self.entrypoint.proc.pid}/net/{table}").read_text().splitlines()[1:]
            except OSError:
                continue
            listening.update(row.split()[1] for row in rows if len(row.split()) > 3 and row.split()[3] == "0A")
        return idle, frozenset(listening), procs

    def entrypoint_output(self) -> str:
        """What the image's ENTRYPOINT printed so far (its last 16 KiB), or "" without one."""
        return self.entrypoint.output() if self.entrypoint else ""

    async def _identity(self, user: str | None) -> Identity:
        spec = user if user is not None else self.prepared.user
        if spec not in self._users:
            self._users[spec] = await self.jail.identity(spec)
        return self._users[spec]

    async def exec(self, command: str, *, timeout: float = 60.0, env: Mapping[str, str] | None = None,
                   cwd: str | None = None, user: str | None = None, stdin: bytes | None = None,
                   output_limit: int = DEFAULT_OUTPUT_LIMIT) -> ExecResult:
        if len(command.encode()) > 120_000:  # the kernel's limit for one argument is 128 KiB
            raise SandboxError("command longer than 120 KB", hint="upload a script and run that instead")
        return await self._exec(command, timeout=timeout, env=env, cwd=cwd, user=user, stdin=stdin,
                                output_limit=output_limit)

    async def _exec(self, command: str, *, timeout: float, env: Mapping[str, str] | None, cwd: str | None,
                    user: str | None, stdin: bytes | None = None, output_limit: int = DEFAULT_OUTPUT_LIMIT,
                    ro_binds: Sequence[tuple[str, str]] = ()) -> ExecResult:
        async with self._lock:
            identity = await self._identity(user)
            full_env = {"HOME": identity.home, **self.env, **(env or {})}
            out = await self.jail.run([self.shell, "-c", command], env=full_env, cwd=cwd or self.workdir,
                                      identity=identity, stdin=stdin, timeout=timeout, limit=output_limit,
                                      ro_binds=ro_binds)
        return ExecResult(command=command, exit_code=out.exit_code,
                          stdout=out.stdout.decode("utf-8", errors="replace"),
                          stderr=out.stderr.decode("utf-8", errors="replace"),
                          seconds=out.seconds, timed_out=out.timed_out, truncated=out.truncated)

    async def put_archive(self, remote_dir: str, data: bytes) -> None:
        async with self._lock:
            out = await self.jail.run(["/bin/sh", "-c", _PUT, "sh", absolute(remote_dir)], stdin=data,
                                      timeout=FILE_TIMEOUT)
        if out.exit_code != 0:
            raise SandboxError(f"upload to {remote_dir} failed: {_last_line(out.stderr) or f'exit {out.exit_code}'}")

    async def get_archive(self, remote_path: str) -> bytes:
        path = PurePosixPath(absolute(remote_path))
        parent, name = (str(path.parent), path.name) if path.name else ("/", ".")
        async with self._lock:
            out = await self.jail.run(["/bin/sh", "-c", _GET, "sh", parent, name], timeout=FILE_TIMEOUT,
                                      limit=ARCHIVE_LIMIT)
        if out.exit_code == _MISSING:
            raise FileNotFoundError(remote_path)
        if out.truncated:
            raise SandboxError(f"{remote_path} is larger than {ARCHIVE_LIMIT >> 20} MiB", hint="download less at once")
        if out.exit_code not in (0, 1):  # tar exits 1 when a file changed while it was read
            raise SandboxError(f"download of {remote_path} failed: {_last_line(out.stderr) or f'exit {out.exit_code}'}")
        return out.stdout

    async def read_files(self, remotes: Sequence[str], *, limit: int = 1 << 20) -> dict[str, bytes | None]:
        folders: dict[str, list[str]] = {}
        for remote in remotes:
            path = PurePosixPath(absolute(remote))
            folders.setdefault(str(path.parent), []).append(path.name)
        found: dict[str, bytes | None] = {}
        for folder, names in folders.items():
            if not all(names):  # "/" itself is no file
                found.update({str(PurePosixPath(folder, name)): None for name in names})
                continue
            async with self._lock:
                out = await self.jail.run(["/bin/sh", "-c", _GET_MANY, "sh", folder, *names], timeout=FILE_TIMEOUT,
                                          limit=ARCHIVE_LIMIT)
            if out.truncated:
                raise SandboxError(f"the files {', '.join(names)} in {folder} are larger than {ARCHIVE_LIMIT >> 20} MiB",
                                   hint="download less at once")
            if out.exit_code not in (0, 1, _MISSING):  # tar exits 1 when a file changed while it was read
                raise SandboxError(f"download of {', '.join(names)} from {folder} failed: "
                                   f"{_last_line(out.stderr) or f'exit {out.exit_code}'}")
            got = named_files(out.stdout, names, limit=limit) if out.exit_code != _MISSING else {}
            found.update({str(PurePosixPath(folder, name)): got.get(name) for name in names})
        return {remote: found[str(PurePosixPath(absolute(remote)))] for remote in remotes}

    # -- verification (docs/verification.md) ------------------------------------------------------
    # Each exec's pid namespace dies with it, so no agent process outlives its command: the default
    # end_agent_processes (nothing to do) holds. The changes are read on the host from the attempt's
    # overlay upper layer; restores run the pristine image's own rm and cp (Jail.run_trusted),
    # because writing the upper layer from the host while it is mounted would leave overlayfs
    # serving what it cached.
    verifier_view = True

    async def changes(self) -> list[FileChange]:
        if not self.jail.opened or self.jail.closed or self.jail.upper is None:
            raise SandboxError("the sandbox is not running", hint="call start() before changes()")
        async with self._lock:
            return await asyncio.to_thread(upper_changes, self.jail.upper, self.jail.pristine())

    async def restore(self, paths: Sequence[str]) -> None:
        await self._trusted(_RESTORE, paths, "restore")

    async def exec_verifier(self, command: str, *, mounts: Mapping[str, Path], timeout: float = 60.0,
                            env: Mapping[str, str] | None = None, user: str | None = None) -> ExecResult:
        """The verifier's command with each runtime directory bound read-only for it alone: no other
        command ever sees it, and no file of it lands in the attempt's layer."""
        if mounts:  # an agent's files or symlinks there go first, in the same command
            await self._trusted(_MOUNT_POINTS, list(mounts), "prepare mount points")
        binds = [(str(self.jail.expose(Path(local))), remote) for remote, local in mounts.items()]
        return await self._exec(command, timeout=timeout, env=env, cwd=None, user=user, ro_binds=binds)

    async def run_warm(self, command: WarmCommand, *, tests: Mapping[str, tuple[bytes, bool]],
                       mounts: Mapping[str, Path], env: Mapping[str, str],
                       timeout: float) -> tuple[ExecResult, dict[str, bytes]] | None:
        """``command`` in a warm server of this backend's pool (warm.py): the attempt's ``inputs``
        are read now (after the verifier view was applied) and handed over as copies. Cold (None)
        unless each input is a regular file here: a missing, linked or oversized one is left to
        test.sh, which sees it as it is."""
        if self.warm_pool is None or not warm.enabled() or self._devices():
            return None
        inputs = await self.read_files(command.inputs, limit=warm.LOG_FILE_LIMIT) if command.inputs else {}
        if any(data is None for data in inputs.values()):
            return None
        full_env = {"HOME": "/tmp", **self.env, **env}
        jail = self.jail
        mounted = {remote: Path(local) for remote, local in mounts.items()}
        shared, _ = await asyncio.to_thread(warm.split_layers, list(jail.lower), command.task_paths)
        # The inputs are each request's own (copied in per request), so commands that differ only in
        # them share a server: tasks of one Dockerfile whose outputs have other names, for one.
        key = (tuple(map(str, shared)), tuple(sorted((r, str(p)) for r, p in mounted.items())),
               tuple(sorted(full_env.items())), dataclasses.replace(command, inputs=()), jail.memory_mb, jail.pids,
               jail.limits, jail.storage_mb)

        def make() -> warm.WarmServer:
            return warm.WarmServer(shared, command, env=full_env, mounts=mounted, memory_mb=jail.memory_mb,
                                   pids=jail.pids, limits=jail.limits, storage_mb=jail.storage_mb)

        outcome = await asyncio.to_thread(self.warm_pool.run, key, make, tests=tests, inputs=inputs, env=full_env,
                                          timeout=timeout, image=list(jail.lower))
        if outcome is None:
            return None
        shown = " ".join([command.python, "-I", command.script, *command.args])
        result = ExecResult(command=f"{shown} (warm)", exit_code=outcome.exit_code,
                            stdout=outcome.stdout.decode("utf-8", errors="replace"),
                            stderr=outcome.stderr.decode("utf-8", errors="replace"),
                            seconds=outcome.seconds, timed_out=outcome.timed_out)
        return result, outcome.logs

    def _devices(self) -> bool:
        """Whether the attempt has devices bound in (a GPU): the warm jail has none, so it stays cold."""
        return bool(self.jail.devices)

    async def _trusted(self, script: str, paths: Sequence[str], what: str) -> None:
        """Run a trusted-helper script over ``paths`` (in chunks that fit one command line)."""
        for chunk in argv_chunks([absolute(p) for p in paths]):
            async with self._lock:
                out = await self.jail.run_trusted(["/bin/sh", "-c", script, "sh", *chunk])
            if out.exit_code != 0:
                raise SandboxError(f"cannot {what} {chunk[0]}{' ...' if len(chunk) > 1 else ''}: "
                                   f"{_last_line(out.stderr) or f'exit {out.exit_code}'}",
                                   hint="the image needs /bin/sh, rm, cp and mkdir for verification")

    async def close(self) -> None:
        # Kill first without the lock, so a running exec ends now instead of at its timeout.
        if self.jail.opened and not self.jail.closed:
            await asyncio.to_thread(self.jail.cgroups.kill)
        async with self._lock:
            await asyncio.to_thread(self._finalizer)
        if self.entrypoint is not None:
            await self.entrypoint.finished()


# The trusted helper's scripts, run by the pristine image's /bin/sh with paths as arguments. Each
# path's parent must resolve (cd -P) to itself inside the attempt's root: one an agent made a
# symlink is refused (planners put replaced parents first, so that never happens by accident).
# ``linked`` finds such a link even where it cannot be followed: an absolute target resolves in the
# pristine root here, where it may not exist (an agent's /logs -> /tmp/x would otherwise look like a
# parent that is simply missing, and what lies behind it would be skipped, not put back).
_REACH = f'''T={TRUSTED_TARGET}
linked() {{
  a=${{1%/*}}
  while [ -n "$a" ]; do [ -L "$T$a" ] && return 0; a=${{a%/*}}; done
  return 1
}}
reach() {{
  d=${{1%/*}}
  if ! cd -P -- "$T$d" 2>/dev/null; then
    if linked "$1"; then echo "refusing $1: $d is redirected" >&2; return 1; fi
    mkdir -p -- "$T$d" && cd -P -- "$T$d" || return 1
  fi
  [ "$(pwd -P)" = "$T$d" ] || {{ echo "refusing $1: $d is redirected" >&2; return 1; }}
}}
status=0
'''
_RESTORE = _REACH + '''for p do
  if ! linked "$p" && ! cd -P -- "$T${p%/*}" 2>/dev/null && ! { [ -e "$p" ] || [ -L "$p" ]; }; then continue; fi
  reach "$p" || { status=1; continue; }
  n=${p##*/}
  rm -rf -- "./$n" || status=1
  if [ -e "$p" ] || [ -L "$p" ]; then cp -a -- "$p" "./$n" || status=1; fi
done
exit $status
'''
# A runtime's mount point: what the agent put there goes (as _RESTORE), then the folder is made.
_MOUNT_POINTS = _REACH + '''for p do
  if linked "$p" || cd -P -- "$T${p%/*}" 2>/dev/null || [ -e "$p" ] || [ -L "$p" ]; then
    reach "$p" || { status=1; continue; }
    n=${p##*/}
    rm -rf -- "./$n" || status=1
    if [ -e "$p" ] || [ -L "$p" ]; then cp -a -- "$p" "./$n" || status=1; fi
  fi
  reach "$p/x" || status=1
done
exit $status
'''


def upper_changes(upper: Path, pristine: Path) -> list[FileChange]:
    """The attempt's changes, read on the host from its overlay upper layer (never following a
    symlink) and compared with the pristine image: a whiteout (a 0:0 character device) is a deletion,
    an opaque directory replaced the image's, an entry the image has is modified, others are added.
    Directories are walked by file descriptor, iteratively: an agent's very deep tree exhausts
    neither PATH_MAX nor the interpreter's stack."""
    changes: list[FileChange] = []
    pending: list[tuple[int, str, int | None]] = [(os.open(upper, _DIR), "", os.open(pristine, _DIR))]
    try:
        while pending:
            upper_fd, rel, image_fd = pending.pop()
            try:
                for name in sorted(os.listdir(upper_fd)):
                    path = f"{rel}/{name}"
                    st = os.stat(name, dir_fd=upper_fd, follow_symlinks=False)
                    image = _at(os.stat, image_fd, name, follow_symlinks=False)
                    if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout: the image's entry was removed
                        if image is not None:
                            changes.append(FileChange(path=path, kind="deleted", is_dir=stat.S_ISDIR(image.st_mode)))
                        continue
                    is_dir = stat.S_ISDIR(st.st_mode)
                    child = _at(os.open, upper_fd, name, _DIR) if is_dir else None
                    if image is None:
                        changes.append(FileChange(path=path, kind="added", is_dir=is_dir))
                    else:
                        replaced = stat.S_IFMT(st.st_mode) != stat.S_IFMT(image.st_mode) or _opaque(child)
                        changes.append(FileChange(path=path, kind="modified", is_dir=is_dir, replaced=replaced))
                    if child is not None:
                        image_dir = image is not None and stat.S_ISDIR(image.st_mode)
                        pending.append((child, path, _at(os.open, image_fd, name, _DIR) if image_dir else None))
            finally:
                for fd in (upper_fd, image_fd):
                    if fd is not None:
                        os.close(fd)
    finally:  # the directories an error left unread
        for left in [fd for upper_fd, _, image_fd in pending for fd in (upper_fd, image_fd) if fd is not None]:
            os.close(left)
    return changes


def _at(call: Callable[..., T], dir_fd: int | None, *args: Any, **kwargs: Any) -> T | None:
    """``call(*args, dir_fd=dir_fd, **kwargs)``, or None without a directory or when it fails."""
    if dir_fd is None:
        return None
    try:
        return call(*args, dir_fd=dir_fd, **kwargs)
    except OSError:
        return None


def _opaque(dir_fd: int | None) -> bool:
    try:
        return dir_fd is not None and os.getxattr(dir_fd, "trusted.overlay.opaque") == b"y"
    except OSError:
        return False


def _last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _gpu_args(task: Task) -> list[str]:
    """The task's GPUs for bwrap (lint refused the task already when this machine has too few, unless
    it is ``gpu_optional``: it then gets those there are, possibly none)."""
    gpus = task.config.environment.gpus
    if gpus <= 0:
        return []
    from .gpu import bwrap_gpu_args, host_gpus

    return bwrap_gpu_args(host_gpus(), gpus)

"""Verification the agent cannot tamper with, on the docker backend (docs/verification.md).

Everything goes through the engine, never through a program the agent could have replaced: the
attempt's changes are the engine's container diff; the image's content comes from a scratch
container of the prepared image (created, never started) through the archive endpoint and is put
back with ``put_archive`` (extracted by the engine). What the image lacks is first overwritten with
an empty file (an added /etc/ld.so.preload must be harmless before anything runs), then removed with
the image's own ``rm`` exec'd by absolute path, no shell. Agent processes are swept by the image's
own ``/bin/sh`` once the system trees are back, and the engine's process list confirms none is left.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Sequence

from ..archive import make_tar, symlink_tar, unpadded_tar
from ..errors import SandboxError
from .base import FileChange, absolute, argv_chunks
from .docker_shared import SWEEP

if TYPE_CHECKING:
    from .docker_backend import DockerBackend
    from .docker_sandbox import DockerSandbox

_KINDS = {0: "modified", 1: "added", 2: "deleted"}
# Go's os.FileMode type bits, as the engine's archive stat reports them.
_GO_DIR, GO_SYMLINK = 1 << 31, 1 << 27
_GO_TYPE = _GO_DIR | GO_SYMLINK | (1 << 26) | (1 << 25) | (1 << 24) | (1 << 21) | (1 << 19)


class ScratchContainers:
    """One created-not-started container per prepared image, whose filesystem is the image's as
    built; removed when the backend closes."""

    def __init__(self, backend: "DockerBackend") -> None:
        self.backend = backend
        self._ids: dict[str, str] = {}
        self._lock = asyncio.Lock()

    async def get(self, image: str) -> str:
        async with self._lock:
            if image not in self._ids:
                api = self.backend.client.api
                created = await self.backend.call(api.create_container, image, command=["true"],
                                                  labels=self.backend.labels("scratch"), network_disabled=True,
                                                  what="create scratch container")
                self._ids[image] = created["Id"]
            return self._ids[image]

    def remove_all(self) -> None:
        ids, self._ids = list(self._ids.values()), {}
        for container_id in ids:
            with contextlib.suppress(Exception):  # best effort: remove_stale gets what is left
                self.backend.remove_container(container_id)


async def stat(backend: "DockerBackend", container_id: str, path: str) -> dict[str, Any] | None:
    """The engine's stat of ``path`` in a container (HEAD on the archive endpoint), None if absent."""
    api = backend.client.api
    from docker.utils import decode_json_header

    def head() -> dict[str, Any] | None:
        res = api.head(api._url("/containers/{0}/archive", container_id), params={"path": path})
        if res.status_code == 404:
            return None
        api._raise_for_status(res)
        return dict(decode_json_header(res.headers.get("X-Docker-Container-Path-Stat") or "e30="))

    return await backend.call(head, what=f"stat {path}")


def _mode(info: dict[str, Any] | None) -> int:
    return int((info or {}).get("mode") or 0)


async def changes(sandbox: "DockerSandbox") -> list[FileChange]:
    backend = sandbox.backend
    api = backend.client.api
    diff = await backend.call(api.diff, sandbox.container_id, what="container diff") or []
    scratch = await backend.scratches.get(sandbox.prepared.ref)
    entries = [(str(item["Path"]), _KINDS.get(int(item["Kind"]), "modified")) for item in diff]
    # The engine says nothing of type: stat what was modified, and the added directories the working
    # directory lies in (made at start when the image lacks it; an empty one has nothing below it).
    workdir = sandbox.workdir.rstrip("/") + "/"
    typed = [path for path, kind in entries
             if kind == "modified" or (kind == "added" and workdir.startswith(path.rstrip("/") + "/"))]
    stats = await asyncio.gather(*(stat(backend, cid, path) for path in typed
                                   for cid in (sandbox.container, scratch)))
    types = {path: (stats[2 * i], stats[2 * i + 1]) for i, path in enumerate(typed)}
    # The diff lists an added directory's entries too: an added path with an entry below it is a
    # directory (the outputs view keeps an added directory on the way to a declared output).
    parents = {str(PurePosixPath(path).parent) for path, _ in entries}
    out: list[FileChange] = []
    for path, kind in entries:
        now, image = types.get(path, (None, None))
        is_dir = bool(_mode(now) & _GO_DIR) and not _mode(now) & GO_SYMLINK
        is_dir = is_dir or (kind == "added" and path.rstrip("/") in parents)
        replaced = now is not None and image is not None and (_mode(now) & _GO_TYPE) != (_mode(image) & _GO_TYPE)
        out.append(FileChange(path=path, kind=kind, is_dir=is_dir, replaced=replaced))  # type: ignore[arg-type]
    return out


async def restore(sandbox: "DockerSandbox", paths: Sequence[str]) -> None:
    """Each path as in the image, parents first; the caller holds no lock."""
    backend = sandbox.backend
    scratch = await backend.scratches.get(sandbox.prepared.ref)
    ordered = sorted(dict.fromkeys(absolute(p) for p in paths), key=lambda p: (p.count("/"), p))
    infos = await asyncio.gather(*(stat(backend, scratch, path) for path in ordered))
    present = [(path, info) for path, info in zip(ordered, infos) if info is not None]
    absent = [path for path, info in zip(ordered, infos) if info is None]
    async with sandbox.exec_lock:
        planted = await asyncio.gather(*(stat(backend, sandbox.container, path) for path in absent))
        for path, now in zip(absent, planted):  # harmless before anything runs: an empty file where one was
            if now is not None and not _mode(now) & _GO_DIR:
                await _put(sandbox, str(PurePosixPath(path).parent), make_tar({PurePosixPath(path).name: (b"", False)}))
        for path, info in present:
            await _put(sandbox, str(PurePosixPath(path).parent), await _image_archive(sandbox, scratch, path, info))
        doomed = list(absent)
        restored_dirs = [p for p, info in present if _mode(info) & _GO_DIR and not _mode(info) & GO_SYMLINK]
        if restored_dirs:  # a put directory merges into what is there: the agent's additions go too
            diff = await backend.call(backend.client.api.diff, sandbox.container_id, what="container diff") or []
            doomed += [str(d["Path"]) for d in diff if int(d["Kind"]) == 1
                       and any(str(d["Path"]).startswith(r.rstrip("/") + "/") for r in restored_dirs)]
        if doomed:
            rm = await _image_program(sandbox, scratch, "rm")
            for chunk in argv_chunks(doomed):
                await _exec_argv(sandbox, [rm, "-rf", "--", *chunk], what="remove agent files")


async def end_agent_processes(sandbox: "DockerSandbox") -> bool:
    """When the engine's process list shows a process that is neither the init nor the sandbox's own
    (the entrypoint's processes and their descendants), sweep with the image's /bin/sh by absolute
    path (the runner put the system trees back first under the protected view) and check that none is
    left. True: agent processes ran until now."""
    if not await _agent_processes(sandbox):
        return False
    async with sandbox.exec_lock:
        await _exec_argv(sandbox, ["/bin/sh", "-c", f"spare=$1; {SWEEP}", "sweep", sandbox.spare],
                         what="sweep", check=False)
    if await _agent_processes(sandbox):
        raise SandboxError("agent processes survived the sweep before verification",
                           hint="a process replaced /bin/sh again while it was put back; "
                                "the attempt cannot be verified")
    return True


async def _agent_processes(sandbox: "DockerSandbox") -> list[str]:
    """The processes in the engine's process list that are neither pid 1 nor the sandbox's own."""
    table = await _process_table(sandbox)
    if table is None:  # host pids (Docker Engine): only the count can be compared with the ready time
        top = await sandbox.backend.call(sandbox.backend.client.api.top, sandbox.container_id, what="list processes")
        extra = len(top.get("Processes") or []) - 1 - len(sandbox.spare.split())
        return [f"{extra} more than at the ready time"] if extra > 0 else []
    own = {entry.split(":")[0] for entry in sandbox.spare.split()}
    # Then the descendants of the sandbox's own processes, not through pid 1, generation by generation.
    while children := {pid for pid, ppid in table.items() if pid not in own and ppid in own}:
        own |= children
    return [pid for pid in table if pid != "1" and pid not in own]


TOP_TRIES = 3  # how many answers of the engine's process list may fail to parse before the check fails


async def _process_table(sandbox: "DockerSandbox") -> dict[str, str] | None:
    """pid -> ppid of each process as the container numbers them, from podman's own endpoint (it reads
    /proc from outside; the compatible one runs ps inside the container). None where the engine has
    no such endpoint: Docker's list gives host pids."""
    api = sandbox.backend.client.api
    cid = sandbox.container_id

    def top() -> dict[str, Any] | None:
        body = ""
        for _ in range(TOP_TRIES):
            res = api._get(api.base_url + f"/v4.0.0/libpod/containers/{cid}/top", params={"ps_args": "pid,ppid"})
            if res.status_code == 404 and "no such container" not in res.text:  # not podman
                return None
            api._raise_for_status(res)
            try:
                return dict(res.json())
            except ValueError:  # an empty answer (seen on a loaded machine while processes came and went)
                body = res.text
        raise SandboxError(f"the engine's process list was not JSON {TOP_TRIES} times in a row: {body[:80]!r}",
                           hint="the attempt cannot be checked for agent processes; check the engine "
                                "(autoenvscaling doctor)")

    got = await sandbox.backend.call(top, what="list processes")
    if got is None:
        return None
    titles = [str(t).upper() for t in got.get("Titles") or []]
    if "PID" not in titles or "PPID" not in titles:
        raise SandboxError(f"the engine's process list has no PID and PPID columns ({' '.join(titles)[:80]})")
    i, j = titles.index("PID"), titles.index("PPID")
    return {str(row[i]).strip(): str(row[j]).strip() for row in got.get("Processes") or []}


async def _put(sandbox: "DockerSandbox", directory: str, data: bytes) -> None:
    api = sandbox.backend.client.api
    ok = await sandbox.backend.call(api.put_archive, sandbox.container_id, directory, unpadded_tar(data),
                                    what=f"restore into {directory}")
    if not ok:
        raise SandboxError(f"the engine refused to restore into {directory}")


async def _image_archive(sandbox: "DockerSandbox", scratch: str, path: str, info: dict[str, Any]) -> bytes:
    """The image's entry at ``path`` as a tar. The archive endpoint follows a final symlink, so a
    symlink is rebuilt from the stat's target instead."""
    name = PurePosixPath(path).name
    if _mode(info) & GO_SYMLINK:
        return symlink_tar(name, str(info.get("linkTarget") or ""))
    api = sandbox.backend.client.api

    def fetch() -> bytes:
        stream, _ = api.get_archive(scratch, path)
        return b"".join(stream)

    return await sandbox.backend.call(fetch, what=f"read the image's {path}", timeout=None)


async def _image_program(sandbox: "DockerSandbox", scratch: str, name: str) -> str:
    for candidate in (f"/usr/bin/{name}", f"/bin/{name}"):
        if await stat(sandbox.backend, scratch, candidate) is not None:
            return candidate
    raise SandboxError(f"the image has no {name} in /usr/bin or /bin", hint="verification needs the image's rm")


async def _exec_argv(sandbox: "DockerSandbox", argv: list[str], *, what: str, check: bool = True) -> None:
    """Run ``argv`` as root with no shell and no wrapper (lock held by the caller)."""
    api = sandbox.backend.client.api
    created = await sandbox.backend.call(api.exec_create, sandbox.container_id, argv, user="0", what=what)
    output = await sandbox.backend.call(api.exec_start, created["Id"], what=what)
    info = await sandbox.backend.call(api.exec_inspect, created["Id"], what=what)
    if check and info.get("ExitCode") not in (0, None):
        text = output.decode("utf-8", errors="replace").strip().splitlines() if isinstance(output, bytes) else []
        raise SandboxError(f"{what} failed (exit {info.get('ExitCode')}): {text[-1][:200] if text else 'no output'}")

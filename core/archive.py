"""Tars, in one place: how files travel into a sandbox (``Sandbox.upload_files``, a build step's
sources), how a whole task travels in a job or a run.sqlite row (``tasks.harbor.task_to_blob``), how a
local root filesystem streams into an engine, and how archives a sandbox gives back are read."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence


def make_tar(files: Mapping[str, bytes | tuple[bytes, bool]], *, dirs: Iterable[str] = ()) -> bytes:
    """An in-memory tar of ``files`` (``{path: bytes or (bytes, executable)}``; without the flag a
    ``.sh`` file is executable). Directories are implied by the paths; ``dirs`` adds ones that may be
    empty, first. Files 0644 or 0755, directories 0755, owned by root, mtime now."""
    buf = io.BytesIO()
    now = int(time.time())  # uploaded files are "new": a 1970 mtime confuses make and freshness checks
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        seen: set[str] = set()

        def add_dirs(parts: tuple[str, ...]) -> None:
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in seen:
                    seen.add(d)
                    info = tarfile.TarInfo(d)
                    info.type = tarfile.DIRTYPE
                    info.mode = 0o755
                    info.mtime = now
                    tar.addfile(info)

        for d in sorted(dirs):
            add_dirs(_safe(d).parts)
        for rel in sorted(files):
            value = files[rel]
            data, executable = value if isinstance(value, tuple) else (value, rel.endswith(".sh"))
            add_dirs(_safe(rel).parts[:-1])
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mtime = now
            info.mode = 0o755 if executable else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _safe(rel: str) -> PurePosixPath:
    path = PurePosixPath(rel)
    if ".." in path.parts or path.is_absolute():
        raise ValueError(f"unsafe path in archive: {rel!r}")
    return path


def symlink_tar(name: str, target: str) -> bytes:
    """A tar holding one symlink ``name`` -> ``target`` (mode 0777, mtime 0): what the Docker archive
    endpoint, which follows a final symlink, would have given for the link itself."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name or "link")
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
        tar.addfile(info)
    return buf.getvalue()


class _Sink(io.RawIOBase):
    """A write-only file that hands out what was written so far (for streaming a tar)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data, self.chunks = b"".join(self.chunks), []
        return data


def tree_tar(root: Path) -> Iterator[bytes]:
    """Stream a directory tree as a tar (owners, modes, links and device nodes kept; entries in sorted
    order), so a 180 MB root filesystem is imported without a temporary file or holding it in memory."""
    sink = _Sink()
    with tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel = Path(dirpath).relative_to(root)
            if rel != Path("."):
                tar.add(dirpath, arcname=str(rel), recursive=False)
            # os.walk does not descend into symlinked directories; they are entries of their own.
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            for name in sorted(filenames) + links:
                tar.add(os.path.join(dirpath, name), arcname=str(rel / name), recursive=False)
                if chunk := sink.take():
                    yield chunk
    if chunk := sink.take():
        yield chunk


def unpadded_tar(data: bytes) -> bytes:
    """``data`` cut after its two end-of-archive blocks. A writer pads a tar to a whole record (10 KiB
    for Python's tarfile); podman's archive endpoint stops reading at the end blocks and can fail the
    upload with "broken pipe" while the padding is still being sent (containers/buildah#6573). Not a
    tar, or anything but zeros after the end: returned unchanged, for the engine to judge."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for _ in tar:
                pass
            end = tar.offset + 2 * tarfile.BLOCKSIZE
    except tarfile.TarError:
        return data
    if end >= len(data) or data[tar.offset:].count(0) != len(data) - tar.offset:
        return data
    return data[:end]


def extract_tar(data: bytes, dest: str | Path, *, check: Callable[[tarfile.TarInfo], None] | None = None) -> None:
    """Extract ``data`` into ``dest`` through tarfile's "data" filter (nothing outside ``dest``, no
    devices, no setuid bits). ``check`` sees every member first and raises to refuse the archive."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if check is not None:
            for member in tar.getmembers():
                check(member)
        tar.extractall(dest, filter="data")


def first_file(data: bytes, *, limit: int) -> bytes | None:
    """The content of the archive's first member when it is a regular file of at most ``limit``
    bytes; None otherwise (a symlink is never followed)."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            if member.isfile() and member.size <= limit:
                fh = tar.extractfile(member)
                return fh.read() if fh else None
            return None
    return None


def named_files(data: bytes, names: Sequence[str], *, limit: int) -> dict[str, bytes | None]:
    """The contents of the archive's top-level members called ``names``: each a regular file of at
    most ``limit`` bytes, or None (missing, a symlink, a directory, too large)."""
    found: dict[str, bytes | None] = dict.fromkeys(names)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if name in found and found[name] is None and member.isfile() and member.size <= limit:
                fh = tar.extractfile(member)
                found[name] = fh.read() if fh else None
    return found

"""Tars in memory: how files travel into a sandbox (``Sandbox.upload_files``), and how a whole task travels
in a job or a run.sqlite row (``tasks.harbor.task_to_blob``)."""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import PurePosixPath
from typing import Mapping


def make_tar(files: Mapping[str, bytes | tuple[bytes, bool]]) -> bytes:
    """An in-memory tar of ``files``; directories are implied by the paths."""
    buf = io.BytesIO()
    now = int(time.time())  # uploaded files are "new": a 1970 mtime confuses make and freshness checks
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs: set[str] = set()
        for rel in sorted(files):
            value = files[rel]
            data, executable = value if isinstance(value, tuple) else (value, rel.endswith(".sh"))
            parts = PurePosixPath(rel).parts
            if ".." in parts or PurePosixPath(rel).is_absolute():
                raise ValueError(f"unsafe path in archive: {rel!r}")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type = tarfile.DIRTYPE
                    info.mode = 0o755
                    info.mtime = now
                    tar.addfile(info)
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mtime = now
            info.mode = 0o755 if executable else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()

"""Local base root filesystems: what a Dockerfile's FROM maps to when no registry is reachable.

We cannot pull images, so base images are built locally once with ``mmdebstrap`` from Debian's
package archive and cached. ``FROM`` lines are mapped through ``BASE_IMAGE_MAP`` (first matching
glob wins): ubuntu, debian and python images all map to a Debian bookworm root with python3, which
is what the common subset of Harbor tasks needs. Anything unmapped is refused with a hint.
"""

from __future__ import annotations

import fcntl
import fnmatch
import os
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..config import cache_dir as default_cache_dir
from ..errors import BuildError, MissingPrerequisite

SUITE = "bookworm"
MIRROR = os.environ.get("AUTOENVSCALING_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# Packages every base root has: python3 for verifiers (pytest), and what test.sh scripts assume.
BASE_PACKAGES = ["python3", "ca-certificates", "procps"]

# FROM image glob -> local base name. Extend with AUTOENVSCALING_BASE_IMAGES="img=base,img2=base".
BASE_IMAGE_MAP: list[tuple[str, str]] = [
    ("ubuntu*", "debian-bookworm"),
    ("debian*", "debian-bookworm"),
    ("python*", "debian-bookworm"),
    ("buildpack-deps*", "debian-bookworm"),
    ("autoenvscaling/base*", "debian-bookworm"),
    ("docker.io/library/ubuntu*", "debian-bookworm"),
    ("docker.io/library/debian*", "debian-bookworm"),
    ("docker.io/library/python*", "debian-bookworm"),
]
BASES = {"debian-bookworm": (SUITE, BASE_PACKAGES)}


def map_base_image(image: str) -> str | None:
    """The local base name for a FROM image, or None when it is not mapped."""
    extra = os.environ.get("AUTOENVSCALING_BASE_IMAGES", "")
    table = [tuple(item.split("=", 1)) for item in extra.split(",") if "=" in item] + BASE_IMAGE_MAP
    for pattern, base in table:
        if fnmatch.fnmatch(image, pattern):
            return base
    return None


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (build caches are shared by parallel workers)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def base_rootfs(base: str = "debian-bookworm", *, cache_dir: Path | None = None, quiet: bool = True) -> Path:
    """The directory of a base root filesystem, built with mmdebstrap on first use (~20 s, needs
    Debian's archive reachable once). Safe to call concurrently from several processes."""
    if base not in BASES:
        raise BuildError(f"unknown base root filesystem {base!r}", hint=f"known: {', '.join(BASES)}")
    root = Path(cache_dir or default_cache_dir()) / "rootfs"
    target = root / base
    marker = root / f"{base}.complete"  # outside the tree, so sandboxes never see it
    if marker.exists():
        return target
    with file_lock(root / f".{base}.lock"):
        if marker.exists():
            return target
        if shutil.which("mmdebstrap") is None:
            raise MissingPrerequisite("mmdebstrap is not installed (needed to build the local base image)",
                                      hint="apt-get install mmdebstrap")
        suite, packages = BASES[base]
        tmp = root / f".{base}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = ["mmdebstrap", "--variant=minbase", f"--include={','.join(packages)}",
               "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
               "--dpkgopt=path-exclude=/usr/share/locale/*", suite, str(tmp), MIRROR]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise BuildError(f"building base root filesystem {base} failed: {tail[0]}",
                             hint=f"check that {MIRROR} is reachable, or set AUTOENVSCALING_DEBIAN_MIRROR")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        marker.write_text(f"built in {time.monotonic() - start:.1f}s with: {' '.join(cmd)}\n")
    return target

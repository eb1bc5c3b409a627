"""Local base root filesystems: what a Dockerfile's FROM maps to when no registry is reachable.

We cannot pull images, so base images are built locally once with ``mmdebstrap`` from Debian's
package archive and cached. ``FROM`` lines are mapped through ``BASE_IMAGE_MAP`` (first matching
glob wins): ubuntu, debian and python images all map to a Debian bookworm root with python3, which
is what the common subset of Harbor tasks needs. Anything unmapped is refused with a hint.
"""

from __future__ import annotations

import asyncio
import fcntl
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import AsyncIterator, Iterator

from ..config import cache_dir as default_cache_dir
from ..errors import BuildError, MissingPrerequisite
from .isolation import SANDBOX_GID, SANDBOX_UID, owner_alive, owner_tag

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


def base_rootfs_built(base: str = "debian-bookworm", *, cache_dir: Path | None = None) -> bool:
    """Whether ``base`` is already built (then mmdebstrap is no longer needed)."""
    return (Path(cache_dir or default_cache_dir()) / "rootfs" / f"{base}.complete").exists()


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


# -- layers for the bwrap backend ---------------------------------------------------------------------
# A layer is an overlay upper directory plus its metadata: <cache>/bwrap/layers/<key>/{fs,meta.json}.
# Keys are content hashes chained from the parent's key, so tasks that share a Dockerfile prefix share
# its layers. A layer appears by an atomic rename of a finished staging directory; a file lock per key
# makes concurrent builders of the same layer wait for one another instead of building twice.
LAYER_FORMAT = 1  # bump when the layout or the base-layer preparation changes
SANDBOX_FILES = {  # written into the base layer: what Docker would provide at run time
    "etc/hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tsandbox\n",
    "etc/hostname": "sandbox\n",
    # apt drops to the _apt user to download; a sandbox maps only uid 0, so apt stays root.
    "etc/apt/apt.conf.d/99autoenvscaling-sandbox": 'APT::Sandbox::User "root";\n',
}


def layer_key(parent: str, payload: dict) -> str:
    """The content hash naming a layer: its parent's key plus what the instruction did."""
    blob = json.dumps({"format": LAYER_FORMAT, "parent": parent, **payload}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class LayerStore:
    """The shared, content-addressed layer cache of the bwrap backend."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = Path(cache_dir or default_cache_dir())
        self.root = self.cache_dir / "bwrap" / "layers"
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.root / key

    def fs(self, key: str) -> Path:
        return self.root / key / "fs"

    def has(self, key: str) -> bool:
        return (self.root / key).is_dir()

    def meta(self, key: str) -> dict:
        try:
            return json.loads((self.root / key / "meta.json").read_text())
        except (OSError, ValueError):
            return {}

    def write_extra(self, key: str, name: str, data: dict) -> None:
        """Attach derived facts (e.g. an inspection of the stack topped by this layer), atomically."""
        tmp = self.root / key / f".{name}.{os.getpid()}"
        tmp.write_text(json.dumps(data, sort_keys=True))
        tmp.rename(self.root / key / name)

    def read_extra(self, key: str, name: str) -> dict | None:
        try:
            return json.loads((self.root / key / name).read_text())
        except (OSError, ValueError):
            return None

    @asynccontextmanager
    async def lock(self, key: str, deadline: float | None = None) -> AsyncIterator[None]:
        """An exclusive inter-process lock on one key, polled so the event loop keeps running."""
        path = self.root / ".locks" / f"{key}.lock"
        path.parent.mkdir(exist_ok=True)
        with open(path, "w") as fh:
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if deadline is not None and time.monotonic() > deadline:
                        raise BuildError(f"timed out waiting for another build of layer {key}",
                                         hint="raise [environment].build_timeout_sec") from None
                    await asyncio.sleep(0.1)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def stage(self, key: str) -> Path:
        """A fresh staging directory (fs/ owned by the sandbox uid, work/ for overlayfs)."""
        staging = self.root / f".tmp-{owner_tag()}.{key}"
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "fs").mkdir(parents=True)
        (staging / "work").mkdir(mode=0o700)
        os.chown(staging / "fs", SANDBOX_UID, SANDBOX_GID)
        os.chmod(staging / "fs", 0o755)
        return staging

    def commit(self, key: str, staging: Path, meta: dict) -> None:
        """Publish a finished staging directory as layer ``key`` (atomic rename)."""
        shutil.rmtree(staging / "work", ignore_errors=True)
        meta = {**meta, "empty": not any((staging / "fs").iterdir()), "created": time.time()}
        (staging / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
        staging.rename(self.root / key)

    def cleanup_stale(self) -> None:
        """Remove staging directories whose builder process is gone."""
        for entry in self.root.glob(".tmp-*"):
            if not owner_alive(entry.name[len(".tmp-"):]):
                shutil.rmtree(entry, ignore_errors=True)

    async def base_layer(self, base: str) -> tuple[str, bool]:
        """The key of the bottom layer for ``base`` and whether this call built it: the base root
        filesystem copied with every file owned by the sandbox uid (so root inside a sandbox owns it),
        plus SANDBOX_FILES."""
        rootfs = await asyncio.to_thread(base_rootfs, base, cache_dir=self.cache_dir)
        marker = (rootfs.parent / f"{base}.complete").read_text()
        key = layer_key("", {"op": "base", "base": base, "built": marker, "uid": SANDBOX_UID,
                             "files": SANDBOX_FILES})
        if self.has(key):
            return key, False
        async with self.lock(key):
            if self.has(key):
                return key, False
            staging = self.stage(key)
            await asyncio.to_thread(_copy_as_sandbox_owner, rootfs, staging / "fs")
            self.commit(key, staging, {"instruction": f"FROM {base}", "base": base})
        return key, True


def _copy_as_sandbox_owner(src: Path, dst: Path) -> None:
    """Copy a root filesystem with all owners set to the sandbox uid. A tar pipe keeps modes,
    setuid bits (restored after chown), hard links and special files; ~1 s for a minbase root."""
    pack = subprocess.Popen(["tar", "--numeric-owner", f"--owner={SANDBOX_UID}", f"--group={SANDBOX_GID}",
                             "-C", str(src), "-cf", "-", "."], stdout=subprocess.PIPE)
    unpack = subprocess.run(["tar", "-C", str(dst), "-xpf", "-", "--numeric-owner", "--same-owner"],
                            stdin=pack.stdout, capture_output=True)
    assert pack.stdout is not None
    pack.stdout.close()
    if pack.wait() != 0 or unpack.returncode != 0:
        raise BuildError(f"copying the base root filesystem failed: {unpack.stderr.decode()[-300:]}")
    for rel, text in SANDBOX_FILES.items():
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_text(text)
        os.chown(target, SANDBOX_UID, SANDBOX_GID)
        os.chmod(target, 0o644)

"""Local base root filesystems: what a Dockerfile's FROM maps to when no registry is reachable.

We cannot pull images, so base images are built locally once with ``mmdebstrap`` from Debian's
package archive and cached. ``resolve_base`` maps a FROM image to one of the recipes in ``BASES``
through a table of known images (``KNOWN_IMAGES``, shown by ``autoenvscaling doctor`` and
docs/sandboxes.md): Debian and Ubuntu releases, the official ``python`` images (with ``python``, ``pip`` and the
requested minor version where a Debian release ships it: bookworm 3.11, trixie 3.13) and the
Terminal-Bench base images. Every mapping that is not faithful says what it substituted (the
``note``); the gate evidence and the prepared environment carry it. Anything unknown is refused with
a hint, or mapped by the user with AUTOENVSCALING_BASE_IMAGES.

A stand-in holds what its image holds, no more: a task must not pass here only because our root has a
tool the real image lacks. ``debian:bookworm``/``debian:trixie`` are ``mmdebstrap --variant=minbase``,
the package set of the official images (no python3, ca-certificates or procps); the Ubuntu stand-ins
add what ``ubuntu:22.04``/``ubuntu:24.04`` have beyond it (procps, sensible-utils), and the python
stand-ins what ``python:*-slim`` installs (ca-certificates, netbase, tzdata, Python with pip). Package
sets were checked against docker-library/repo-info's manifests of the official images. What a stand-in
still adds or lacks is in ``KNOWN_IMAGES``' notes.
"""

from __future__ import annotations

import asyncio
import fcntl
import fnmatch
import hashlib
import itertools
import json
import os
import re
import shutil
import stat
import subprocess
import time
import uuid
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import AsyncIterator, Callable, Iterator

from ..config import cache_dir as default_cache_dir
from ..errors import BuildError, BuildTimeout, MissingPrerequisite
from .isolation import SANDBOX_GID, SANDBOX_UID, UID_RANGE, owner_alive, owner_tag

MIRROR = os.environ.get("AUTOENVSCALING_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# What the official images have beyond a Debian minbase root (docker-library/repo-info manifests).
UBUNTU_PACKAGES = ("procps", "sensible-utils")  # ubuntu:22.04 and ubuntu:24.04 ship both
PYTHON_IMAGE_PACKAGES = ("ca-certificates", "netbase", "tzdata")  # what python:*-slim installs besides Python
PYTHON_PACKAGES = ("python3", "python3-pip", "python3-venv", "python-is-python3")
TBENCH_PACKAGES = ("tmux", "asciinema")
DEBIAN_PYTHON = {"bookworm": "3.11", "trixie": "3.13"}  # the python3 each release ships
PYTHON_ENV = (("LANG", "C.UTF-8"),)
# Left out of every root (as in the -slim images): documentation, manual pages, translations.
PATH_EXCLUDES = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*")
# Merge /usr on bookworm the way debian:bookworm does (debootstrap's method, with the usr-is-merged
# package). Without it, mmdebstrap installs usrmerge, which pulls in perl and its modules: the root would
# have a full perl that debian:bookworm lacks (it has perl-base only). Trixie needs neither package.
MERGED_USR_HOOK = Path("/usr/share/mmdebstrap/hooks/merged-usr")
MERGED_USR_SUITES = frozenset({"bookworm"})
BUILD_FORMAT = 2  # part of every recipe: bump when how roots are built changes (2: merged-usr hook)


@dataclass(frozen=True)
class BaseSpec:
    """How one local base root is made: a Debian suite, its packages, and image settings."""

    name: str
    suite: str
    packages: tuple[str, ...]
    description: str
    env: tuple[tuple[str, str], ...] = ()
    python_image: bool = False  # python, pip on PATH; pip may install system-wide (no EXTERNALLY-MANAGED)

    def recipe(self) -> str:
        """A stable string naming everything that shapes the root (part of cache keys)."""
        return json.dumps({**asdict(self), "build": BUILD_FORMAT}, sort_keys=True)


def _python_base(suite: str, extra: tuple[str, ...] = (), prefix: str = "python") -> BaseSpec:
    version = DEBIAN_PYTHON[suite]
    return BaseSpec(name=f"{prefix}-{version}-{suite}", suite=suite,
                    packages=PYTHON_IMAGE_PACKAGES + PYTHON_PACKAGES + extra,
                    description=f"Debian {suite} with Python {version}, python and pip on PATH"
                                + (f", {', '.join(extra)}" if extra else ""),
                    env=PYTHON_ENV + (("PYTHON_VERSION", version),), python_image=True)


BASES: dict[str, BaseSpec] = {spec.name: spec for spec in (
    BaseSpec("debian-bookworm", "bookworm", (), "Debian 12 (bookworm) minbase: the debian:bookworm package set"),
    BaseSpec("debian-trixie", "trixie", (), "Debian 13 (trixie) minbase: the debian:trixie package set"),
    BaseSpec("ubuntu-on-bookworm", "bookworm", UBUNTU_PACKAGES,
             "Debian bookworm minbase with what ubuntu:22.04 adds to it (procps, sensible-utils)"),
    BaseSpec("ubuntu-on-trixie", "trixie", UBUNTU_PACKAGES,
             "Debian trixie minbase with what ubuntu:24.04 adds to it (procps, sensible-utils)"),
    _python_base("bookworm"),
    _python_base("trixie"),
    BaseSpec("tbench-trixie", "trixie", UBUNTU_PACKAGES + TBENCH_PACKAGES,
             "the ubuntu-on-trixie stand-in with tmux and asciinema (the Terminal-Bench image's tools)"),
    _python_base("trixie", TBENCH_PACKAGES, prefix="tbench-python"),
)}


@dataclass(frozen=True)
class BaseMapping:
    """What one FROM image became: the local base, and what was substituted ("" = faithful)."""

    image: str
    base: str
    note: str = ""


# The table users see (doctor, docs/sandboxes.md): image pattern, local base, what differs from the real image.
SLIM = "no /usr/share/doc, man or locale files (as in the -slim tags)"
KNOWN_IMAGES: list[tuple[str, str, str]] = [
    ("debian:bookworm, debian:12, *-slim", "debian-bookworm",
     f"faithful: minbase is the image's package set (no python3, ca-certificates, procps); {SLIM}"),
    ("debian:trixie, debian:13, debian:latest, debian:stable", "debian-trixie",
     f"faithful: minbase is the image's package set (no python3, ca-certificates, procps); {SLIM}"),
    ("debian:bullseye, debian:11, older", "debian-bookworm", "substituted: bookworm stands in"),
    ("ubuntu:24.04, ubuntu:noble, ubuntu:latest", "ubuntu-on-trixie",
     "stand-in: Debian trixie packages (only Debian's archive is reachable; names mostly agree) with procps and "
     "sensible-utils as in the image; no python3 or ca-certificates, as in the image; lacks Ubuntu's "
     "unminimize and libssl3t64"),
    ("ubuntu:22.04, ubuntu:jammy, ubuntu:20.04", "ubuntu-on-bookworm",
     "stand-in: Debian bookworm packages with procps and sensible-utils; no python3 or ca-certificates, as in "
     "the image; adds tzdata (Debian bookworm's minbase has it, ubuntu:22.04 does not)"),
    ("python:3.11-*", "python-3.11-bookworm",
     "faithful Python minor version, Debian's build of it (in /usr, linked from /usr/local/bin); "
     "ca-certificates, netbase, tzdata as in -slim; not the full tags' build tools"),
    ("python:3.13-*, python:3-*, python:latest", "python-3.13-trixie",
     "faithful Python minor version, Debian's build; a -bookworm tag moves to trixie, which ships 3.13"),
    ("python:3.12-* and other minors", "python-3.13-trixie or python-3.11-bookworm",
     "substituted: the nearest minor Debian ships (>= 3.12 -> 3.13, older -> 3.11)"),
    ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:*", "tbench-trixie",
     "stand-in: the ubuntu:24.04 stand-in with tmux and asciinema; Debian's asciinema pulls in python3 "
     "(whether the real image has python3 is not verified here)"),
    ("ghcr.io/laude-institute/t-bench/python-3-13:*", "tbench-python-3.13-trixie",
     "faithful Python 3.13, Debian trixie, with tmux and asciinema"),
    ("buildpack-deps:*", "debian-bookworm / debian-trixie", "substituted: without the preinstalled build tools"),
    ("autoenvscaling/base:NAME", "NAME", "our own bases by name"),
]

_PY_VERSION = re.compile(r"^(\d+)(?:\.(\d+))?(?:\.\d+)?")


def split_image(image: str) -> tuple[str, str]:
    """(repository without docker.io/library, tag) of an image reference; digests are dropped."""
    ref = image.split("@", 1)[0]
    name, tag = ref, ""
    if ":" in ref.rsplit("/", 1)[-1]:
        name, tag = ref.rsplit(":", 1)
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/library/", "library/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name.lower(), tag.lower()


def _release_in(tag: str) -> str | None:
    """The Debian release a tag asks for, if it names one."""
    return next((suite for suite in ("trixie", "bookworm", "bullseye", "buster", "stretch") if suite in tag), None)


def _debian(tag: str, image: str) -> BaseMapping:
    release = _release_in(tag) or {"12": "bookworm", "13": "trixie", "11": "bullseye", "10": "buster"}.get(
        tag.split(".")[0].split("-")[0], "trixie" if tag in ("", "latest", "stable", "stable-slim", "slim") else "")
    if release in ("bookworm", "trixie"):
        return BaseMapping(image, f"debian-{release}")
    if release:
        return BaseMapping(image, "debian-bookworm", f"Debian {release} is not built here: bookworm stands in")
    return BaseMapping(image, "debian-trixie", f"unknown Debian tag {tag!r}: trixie stands in")


def _ubuntu(tag: str, image: str) -> BaseMapping:
    older = tag.startswith(("22.04", "jammy", "20.04", "focal", "18.04", "bionic"))
    release, suite = tag, "bookworm" if older else "trixie"
    if tag in ("", "latest") or tag.startswith(("24.04", "noble")):
        release = "latest" if tag in ("", "latest") else "24.04"
    note = (f"Ubuntu {release} stand-in: Debian {suite} plus procps and sensible-utils as in the image "
            "(only Debian's archive is reachable)")
    return BaseMapping(image, f"ubuntu-on-{suite}", note)


def _python(tag: str, image: str) -> BaseMapping:
    notes = []
    if "alpine" in tag:
        notes.append("Alpine stand-in: Debian (apk is not available)")
    match = _PY_VERSION.match(tag)
    wanted = f"{match.group(1)}.{match.group(2)}" if match and match.group(2) else None
    release = _release_in(tag)
    shipped = {v: s for s, v in DEBIAN_PYTHON.items()}
    if wanted in shipped:
        suite = shipped[wanted]
        if release and release != suite:
            notes.append(f"Debian {release} ships Python {DEBIAN_PYTHON.get(release, 'another')}: "
                         f"{suite} stands in to keep Python {wanted}")
    elif wanted is None:
        suite = "trixie"
        if tag not in ("", "latest", "3", "slim") and not tag.startswith(("3-", "slim")):
            notes.append(f"no Python version in tag {tag!r}: Python 3.13 stands in")
    else:
        major, minor = (int(x) for x in wanted.split("."))
        suite = "trixie" if (major, minor) >= (3, 12) else "bookworm"
        notes.append(f"Python {wanted} is not in Debian's archive: Python {DEBIAN_PYTHON[suite]} ({suite}) stands in")
    return BaseMapping(image, f"python-{DEBIAN_PYTHON[suite]}-{suite}", "; ".join(notes))


def resolve_base(image: str) -> BaseMapping | None:
    """The local base for a FROM image and what it substitutes, or None when it is not known.
    User mappings (AUTOENVSCALING_BASE_IMAGES="glob=base,...") come first."""
    extra = os.environ.get("AUTOENVSCALING_BASE_IMAGES", "")
    for item in extra.split(","):
        pattern, eq, base = item.strip().partition("=")
        if eq and fnmatch.fnmatch(image, pattern.strip()):
            return BaseMapping(image, base.strip(), "mapped by AUTOENVSCALING_BASE_IMAGES")
    name, tag = split_image(image)
    if name == "ghcr.io/laude-institute/t-bench/ubuntu-24-04":
        return BaseMapping(image, "tbench-trixie",
                           "Terminal-Bench Ubuntu 24.04 stand-in: Debian trixie with tmux and asciinema")
    if name == "ghcr.io/laude-institute/t-bench/python-3-13":
        return BaseMapping(image, "tbench-python-3.13-trixie")
    if name == "autoenvscaling/base" and tag in BASES:
        return BaseMapping(image, tag)
    official = {"debian": _debian, "ubuntu": _ubuntu, "python": _python}.get(name)
    if official is not None:
        return official(tag, image)
    if name == "buildpack-deps":
        mapped = _debian(tag if _release_in(tag) else "", image)
        return BaseMapping(image, mapped.base, "buildpack-deps stand-in: plain Debian without its build tools "
                                               "(apt-get install build-essential git curl)")
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


def build_once(target: Path, lock: Path, build: Callable[[Path], Path], *, ready: Callable[[], bool] | None = None,
               then: Callable[[], object] | None = None) -> Path:
    """``target``, made once between parallel processes: unless ``ready()`` (default: ``target`` is a
    directory), again under ``lock``, ``build`` fills a fresh work directory beside the lock and returns
    what to rename into place complete; ``then`` runs after the rename, still locked. The work
    directory goes whatever happens."""
    ready = ready or target.is_dir
    if ready():
        return target
    with file_lock(lock):
        if ready():
            return target
        work = lock.parent / f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            staged = build(work)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(target, ignore_errors=True)
            staged.rename(target)
            if then is not None:
                then()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _marker(root: Path, base: str) -> Path:
    return root / f"{base}.complete"  # outside the tree, so sandboxes never see it


def _is_current(marker: Path, spec: BaseSpec) -> bool:
    """Whether a finished root was made from this very recipe (a changed recipe rebuilds)."""
    try:
        return json.loads(marker.read_text()).get("recipe") == spec.recipe()
    except (OSError, ValueError):
        return False


def base_rootfs_built(base: str = "debian-bookworm", *, cache_dir: Path | None = None) -> bool:
    """Whether ``base`` is already built from its current recipe (then mmdebstrap is not needed)."""
    spec = BASES.get(base)
    root = Path(cache_dir or default_cache_dir()) / "rootfs"
    return spec is not None and _is_current(_marker(root, base), spec)


def base_rootfs(base: str = "debian-bookworm", *, cache_dir: Path | None = None) -> Path:
    """The directory of a base root filesystem, built with mmdebstrap on first use (~20-40 s, needs
    Debian's archive reachable once). Safe to call concurrently from several processes."""
    spec = BASES.get(base)
    if spec is None:
        raise BuildError(f"unknown base root filesystem {base!r}", hint=f"known: {', '.join(BASES)}")
    root = Path(cache_dir or default_cache_dir()) / "rootfs"
    marker = _marker(root, base)
    made: dict[str, object] = {}

    def build(work: Path) -> Path:
        start = time.monotonic()
        cmd = mmdebstrap(spec.suite, work, packages=spec.packages, what=f"base root filesystem {base}")
        if spec.python_image:
            _as_python_image(work)
        made.update(recipe=spec.recipe(), seconds=round(time.monotonic() - start, 1), command=cmd)
        return work

    return build_once(root / base, root / f".{base}.lock", build, ready=lambda: _is_current(marker, spec),
                      then=lambda: marker.write_text(json.dumps({**made, "built": time.time()})))


def mmdebstrap(suite: str, target: Path, *, packages: tuple[str, ...] = (), variant: str = "minbase",
               what: str = "a root filesystem") -> list[str]:
    """Build ``target`` from Debian's archive with mmdebstrap (documentation, manual pages and
    translations left out) and return the command that did it. A failure leaves no ``target`` and
    raises a one-line BuildError naming the archive; no mmdebstrap is a MissingPrerequisite."""
    if shutil.which("mmdebstrap") is None:
        raise MissingPrerequisite(f"mmdebstrap is not installed (needed to build {what})",
                                  hint="apt-get install mmdebstrap")
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    merge = variant != "extract" and suite in MERGED_USR_SUITES and MERGED_USR_HOOK.is_dir()
    hooks = [f"--hook-dir={MERGED_USR_HOOK}"] if merge else []
    cmd = ["mmdebstrap", f"--variant={variant}", *([f"--include={','.join(packages)}"] if packages else []), *hooks,
           *(f"--dpkgopt=path-exclude={p}" for p in PATH_EXCLUDES), suite, str(target), MIRROR]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BuildError(f"building {what} failed: {tail[0]}",
                         hint=f"check that {MIRROR} is reachable, or set AUTOENVSCALING_DEBIAN_MIRROR")
    return cmd


def _as_python_image(root: Path) -> None:
    """What the official python images offer that Debian's python3 does not: ``python``/``pip`` in
    /usr/local/bin too (scripts name those paths), and ``pip install`` as root without a venv (the
    images' Python is not Debian-managed, so there is no EXTERNALLY-MANAGED marker)."""
    for marker in root.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
        marker.unlink()
    local = root / "usr/local/bin"
    local.mkdir(parents=True, exist_ok=True)
    for name, target in (("python", "/usr/bin/python3"), ("python3", "/usr/bin/python3"),
                         ("pip", "/usr/bin/pip3"), ("pip3", "/usr/bin/pip3")):
        link = local / name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(target)


# -- layers for the bwrap backend ---------------------------------------------------------------------
# A layer is an overlay upper directory plus its metadata: <cache>/bwrap/layers/<key>/{fs,meta.json}.
# Keys are content hashes chained from the parent's key, so tasks that share a Dockerfile prefix share
# its layers. A layer appears by an atomic rename of a finished staging directory; a file lock per key
# makes concurrent builders of the same layer wait for one another instead of building twice.
LAYER_FORMAT = 2  # bump when the layout or the base-layer preparation changes (2: shifted id range)
SANDBOX_FILES = {  # written into the base layer: what Docker would provide at run time
    "etc/hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tsandbox\n",
    "etc/hostname": "sandbox\n",
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
        # Layers whose step failed, for the life of this store (one backend: a batch, a run). Thirty
        # tasks sharing a broken RUN line fail once and report that failure thirty times.
        self.failed: dict[str, BuildError] = {}

    def raise_if_failed(self, key: str) -> None:
        exc = self.failed.get(key)
        if exc is not None:
            rest = str(exc).partition("\n")[2]  # the output tail the first failure printed
            raise type(exc)(f"{exc.message} (this layer already failed in this batch; not rebuilt)\n{rest}",
                             hint=exc.hint)

    def fs(self, key: str) -> Path:
        return self.root / key / "fs"

    def has(self, key: str) -> bool:
        return (self.root / key).is_dir()

    def meta(self, key: str) -> dict:
        return self.read_extra(key, "meta.json") or {}

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
                        raise BuildTimeout(f"timed out waiting for another build of layer {key}",
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
        filesystem copied with every owner shifted into the sandbox's id range (root's files belong
        to SANDBOX_UID, adm's to SANDBOX_UID + 4, ...), plus SANDBOX_FILES."""
        rootfs = await asyncio.to_thread(base_rootfs, base, cache_dir=self.cache_dir)
        marker = _marker(rootfs.parent, base).read_text()
        key = layer_key("", {"op": "base", "base": base, "built": marker, "uid": SANDBOX_UID,
                             "range": UID_RANGE, "files": SANDBOX_FILES})
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
    """Copy a root filesystem with every owner shifted by SANDBOX_UID. A tar pipe keeps modes,
    hard links and special files (~1 s for a minbase root); the shift then walks the copy once."""
    pack = subprocess.Popen(["tar", "--numeric-owner", "-C", str(src), "-cf", "-", "."], stdout=subprocess.PIPE)
    unpack = subprocess.run(["tar", "-C", str(dst), "-xpf", "-", "--numeric-owner", "--same-owner"],
                            stdin=pack.stdout, capture_output=True)
    assert pack.stdout is not None
    pack.stdout.close()
    if pack.wait() != 0 or unpack.returncode != 0:
        raise BuildError(f"copying the base root filesystem failed: {unpack.stderr.decode()[-300:]}")
    shift_owners(dst)
    for rel, text in SANDBOX_FILES.items():
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_text(text)
        os.chown(target, SANDBOX_UID, SANDBOX_GID)
        os.chmod(target, 0o644)


def shift_owners(root: Path) -> None:
    """Move every owner under ``root`` from host ids to the sandbox range (id n -> SANDBOX_UID + n).
    Hard links are shifted once; setuid/setgid bits, which chown clears, are put back. An id outside
    the range cannot be represented inside and becomes nobody/nogroup."""
    seen: set[tuple[int, int]] = set()
    nobody = UID_RANGE - 2
    walked = (os.path.join(dirpath, name) for dirpath, dirnames, filenames in os.walk(root)  # never follows symlinks
              for name in dirnames + filenames)
    for entry in itertools.chain([str(root)], walked):
        st = os.lstat(entry)
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        uid = st.st_uid if st.st_uid < UID_RANGE else nobody
        gid = st.st_gid if st.st_gid < UID_RANGE else nobody
        os.lchown(entry, SANDBOX_UID + uid, SANDBOX_GID + gid)
        if not stat.S_ISLNK(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
            os.chmod(entry, stat.S_IMODE(st.st_mode))

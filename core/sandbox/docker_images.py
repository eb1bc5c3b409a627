"""Images for the docker backend, on an engine that cannot pull.

- Base images: the Debian root filesystem of rootfs.base_rootfs is imported once through the API
  (streamed as a tar, so any Docker-API engine works) as ``autoenvscaling/base:<name>``. The image
  carries a hash of the root filesystem's recipe (rootfs.BASES) as a label: a changed recipe is
  re-imported, and the root filesystem is not even built while the engine has the image.
- FROM lines: an image the engine already has is used as is; anything else is mapped through
  rootfs.map_base_image to a base image, or refused with a hint. Earlier build stages and ``scratch``
  are left alone, so multi-stage builds work.
- Task images are built by the engine from environment/ with the rewritten Dockerfile, on the host
  network (RUN apt-get must reach Debian; the runtime containers stay offline), and tagged
  ``autoenvscaling/env:<hash>`` where the hash covers the rewritten Dockerfile, every context file
  and the base image ids. A build is tagged only when it succeeded within its timeout, so the tag
  is the cache: present means reusable.

Everything here is blocking SDK code; the backend runs it in its thread pool.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ..errors import BuildError, SandboxError
from .dockerfile import parse_dockerfile, words
from .rootfs import BASES, base_rootfs, file_lock, map_base_image

BASE_REPO = "autoenvscaling/base"
ENV_REPO = "autoenvscaling/env"
LABEL = "autoenvscaling"
BUILD_FORMAT = "1"  # part of every environment hash: bump it to rebuild all cached images
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def docker_errors() -> Any:
    """``docker.errors``, imported when first needed (the SDK stays out of import time)."""
    import docker.errors

    return docker.errors


def short_error(exc: BaseException) -> str:
    """One line from a Docker SDK error (its explanation when the engine gave one)."""
    text = str(getattr(exc, "explanation", None) or exc)
    return " ".join(text.split())[:300]


def env_tag(files: Mapping[str, tuple[bytes, bool]], bases: list[str]) -> str:
    """The cache tag of a build context (Dockerfile already rewritten) over the given base images."""
    digest = hashlib.sha256(BUILD_FORMAT.encode())
    for base in bases:
        digest.update(base.encode() + b"\0")
    for rel in sorted(files):
        data, executable = files[rel]
        digest.update(rel.encode() + (b"\0x\0" if executable else b"\0-\0") + len(data).to_bytes(8, "big") + data)
    return f"{ENV_REPO}:{digest.hexdigest()[:24]}"


class ImageStore:
    """Base images, FROM mapping and cached task builds on one engine. Thread-safe; concurrent work
    on the same image is serialized within the process and, by file locks, across processes."""

    def __init__(self, client: Callable[[], Any], cache_dir: Path) -> None:
        self._client = client
        self.cache_dir = cache_dir
        self._locks: dict[str, threading.Lock] = {}

    @property
    def api(self) -> Any:
        return self._client().api

    def base_image(self, base: str) -> str:
        """The engine's image of a local base root filesystem, imported on first use."""
        errors = docker_errors()
        # The recipe, not one build of it: every cache directory (tests, users) builds its own root
        # filesystem, and equal recipes must not re-import (and so rebuild every task image).
        stamp = hashlib.sha256(json.dumps([base, *BASES.get(base, ())]).encode()).hexdigest()[:16]
        ref = f"{BASE_REPO}:{base}"
        with self._lock(ref):
            try:
                labels = self.api.inspect_image(ref).get("Config", {}).get("Labels") or {}
                if labels.get(f"{LABEL}.rootfs") == stamp:
                    return ref
            except errors.ImageNotFound:
                pass
            root = base_rootfs(base, cache_dir=self.cache_dir)
            changes = [f"ENV PATH={DEFAULT_PATH}", f"LABEL {LABEL}.rootfs={stamp}", 'CMD ["bash"]']
            # The tag goes in ``repository``: podman ignores the separate ``tag`` parameter.
            reply = self.api.import_image(src=tree_tar(root), stream_src=True, repository=ref, changes=changes)
            try:
                self.api.inspect_image(ref)
            except errors.ImageNotFound:  # an engine that ignored the tag altogether
                image_id = _last_json(reply).get("id") or _last_json(reply).get("status", "")
                if not image_id:
                    raise SandboxError(f"importing {ref} failed: {str(reply)[-200:]}") from None
                self.api.tag(image_id, BASE_REPO, base)
        return ref

    def resolve(self, image: str) -> str:
        """A FROM / docker_image name as the engine can use it: the image itself when the engine has
        it, else the local base it maps to. Raises BuildError for an unmapped, absent image."""
        try:
            self.api.inspect_image(image)
            return image
        except docker_errors().ImageNotFound:
            pass
        base = map_base_image(image)
        if base is None:
            pattern = image.split(":")[0] + "*"
            raise BuildError(f"image {image} is not on the engine and cannot be pulled (no registry access)",
                             hint=f"load it into the engine, or map it: AUTOENVSCALING_BASE_IMAGES='{pattern}=debian-bookworm'")
        return self.base_image(base)

    def render_dockerfile(self, text: str) -> tuple[str, list[str]]:
        """The Dockerfile with every external FROM pointed at an image the engine has, and the ids
        of those images (part of the cache key)."""
        lines = text.splitlines()
        global_args: dict[str, str] = {}
        stages: set[str] = set()
        bases: list[str] = []
        seen_from = False
        for inst in parse_dockerfile(text):
            if inst.keyword == "ARG" and not seen_from:  # ARGs before the first FROM parameterize it
                for token in words(inst.args, global_args):
                    name, eq, value = token.partition("=")
                    if eq:
                        global_args[name] = value
            if inst.keyword != "FROM":
                continue
            seen_from = True
            tokens = words(inst.args, global_args)
            if not tokens:
                raise BuildError(f"Dockerfile line {inst.line}: FROM needs an image")
            image = tokens[0]
            alias = tokens[2] if len(tokens) >= 3 and tokens[1].lower() == "as" else ""
            earlier_stage = image.lower() in stages
            stages.add(alias.lower())
            if image.lower() == "scratch" or earlier_stage:
                continue
            ref = self.resolve(image)
            bases.append(self.api.inspect_image(ref)["Id"])
            physical = lines[inst.line - 1]
            if not re.match(r"\s*FROM\s", physical, re.I) or physical.rstrip().endswith("\\"):
                raise BuildError(f"Dockerfile line {inst.line}: write FROM on one line")
            flags = " ".join(f"--{k}={v}" if v else f"--{k}" for k, v in inst.flags)
            lines[inst.line - 1] = " ".join(part for part in ("FROM", flags, ref, "AS" if alias else "", alias) if part)
        if not seen_from:
            raise BuildError("the Dockerfile has no FROM", hint="start it with FROM ubuntu:24.04")
        return "\n".join(lines) + "\n", bases

    def build(self, tag: str, context: bytes, cancelled: threading.Event) -> tuple[bool, str]:
        """Build ``context`` (a tar) as ``tag`` unless that tag exists. Returns (cached, output tail).
        ``cancelled`` set by the caller (its timeout passed) keeps a late result from being tagged."""
        errors = docker_errors()
        with self._lock(tag):
            try:
                self.api.inspect_image(tag)
                return True, ""
            except errors.ImageNotFound:
                pass
            log: list[str] = []
            image_id = ""
            stream = self.api.build(fileobj=io.BytesIO(context), custom_context=True, rm=True, forcerm=True,
                                    pull=False, network_mode="host", decode=True, labels={LABEL: "1"})
            for item in stream:
                if "stream" in item:
                    log.extend(item["stream"].replace("\r", "").splitlines())
                    del log[:-200]
                    match = re.match(r"Successfully built ([0-9a-f]+)", item["stream"].strip())
                    image_id = match.group(1) if match else image_id
                if isinstance(item.get("aux"), dict) and item["aux"].get("ID"):
                    image_id = item["aux"]["ID"]
                if "error" in item:
                    tail = "\n".join(line for line in log[-40:] if line.strip())
                    last = " ".join(str(item["error"]).split())[:300]
                    raise BuildError(f"docker build failed: {last}\n{tail}",
                                     hint="fix environment/Dockerfile (output tail in the error details)")
            if not image_id:
                raise BuildError("docker build finished without an image id", hint="\n".join(log[-20:]))
            if cancelled.is_set():
                raise BuildError("docker build finished after its timeout; not cached")
            repo, _, name = tag.partition(":")
            self.api.tag(image_id, repo, name)
            return False, "\n".join(log[-60:])

    def _lock(self, key: str) -> "_Locked":
        lock = self._locks.setdefault(key, threading.Lock())
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
        return _Locked(lock, self.cache_dir / "docker" / f".{safe}.lock")


class _Locked:
    """Hold a thread lock and a file lock (rootfs.file_lock) together."""

    def __init__(self, lock: threading.Lock, path: Path) -> None:
        self.lock, self.path = lock, path
        self.file: Any = None

    def __enter__(self) -> None:
        self.lock.acquire()
        try:
            self.file = file_lock(self.path)
            self.file.__enter__()
        except BaseException:
            self.lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            self.file.__exit__(*exc)
        finally:
            self.lock.release()


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
    """Stream a directory tree as a tar (owners, modes, links and device nodes kept), so a 180 MB
    root filesystem is imported without a temporary file or holding it in memory."""
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


def _last_json(reply: Any) -> dict[str, Any]:
    """The last JSON object of an engine's (possibly multi-line) progress reply."""
    for line in reversed(str(reply).strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}

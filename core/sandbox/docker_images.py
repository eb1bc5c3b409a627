"""Images for the docker backend, on an engine that cannot pull.

- Base images: the Debian root filesystem of rootfs.base_rootfs is imported once through the API
  (streamed as a tar, so any Docker-API engine works) as ``autoenvscaling/base:<name>``, with the
  recipe's environment (rootfs.BaseSpec.env) next to PATH. The image carries a hash of the recipe
  (``BaseSpec.recipe()``) as a label: a changed recipe is re-imported, and the root filesystem is
  not even built while the engine has the image.
- FROM lines: an image the engine already has is used as is; anything else is mapped through
  rootfs.resolve_base to a base image (the mapping, with what it substituted, goes into the prepared
  environment's details), or refused with a hint. Earlier build stages and ``scratch`` are left
  alone, so multi-stage builds work.
- ``COPY --from=IMAGE`` (not an earlier stage): an image the engine has is used as is; a well-known
  tool image (tool_images.py: ``ghcr.io/astral-sh/uv``) is provided offline and imported under its
  own name, so the Dockerfile builds unchanged; anything else is refused with a hint. The image's id
  is part of the cache key, as the base images' are.
- Registry access during RUN steps only (BuildKit-style): the host's CA bundle enters the build
  context under a hidden name that .dockerignore keeps out of every COPY, and every RUN gets a
  read-only bind mount of it under /dev (the build container's own tmpfs, so not even the mount
  point reaches a layer); each stage declares ARGs that
  point SSL_CERT_FILE and friends at it, and the host's proxy and pip index settings are passed as
  build args. ARGs are not ENV: the image's config carries none of it. Engines whose API builder
  has no RUN mounts (Docker's classic builder behind the SDK) build without the CA, and say so.
- Task images are built by the engine, on the host network (RUN apt-get must reach Debian; the
  runtime containers stay offline), and tagged ``autoenvscaling/env:<hash>`` where the hash covers
  the rewritten Dockerfile, every context file (the CA bundle's bytes included, never its mtime),
  the build args that shape the result (pip indexes; not proxies, which only carry traffic), the
  target stage and the base image ids. A build is tagged only when it succeeded within its timeout,
  so the tag is the cache: present means reusable.

Everything here is blocking SDK code; the backend runs it in its thread pool.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ..archive import make_tar, tree_tar
from ..errors import BuildError, SandboxError
from .base import last_json_object
from .buildnet import CA_TARGET, CA_VARIABLES, NETWORK_HINT, PROXY_VARIABLES, host_build_network, unreachable_line
from .dockerfile import arg_decls, expand_vars, parse_dockerfile, words
from .isolation import DEFAULT_PATH
from .rootfs import BASES, base_rootfs, file_lock, resolve_base
from .tool_images import provide_tool_image, resolve_tool_image

BASE_REPO = "autoenvscaling/base"
ENV_REPO = "autoenvscaling/env"
LABEL = "autoenvscaling"
# Set on an image the Harbor harness (testing/harbor_client.py) puts under a real image's name for
# Harbor's builds: it is our stand-in, so our own builds map that name as usual.
STAND_IN_LABEL = f"{LABEL}.harbor-stand-in"
TOOL_LABEL = f"{LABEL}.tool"  # on a tool image we imported (tool_images.py): which one, to notice a newer recipe
BUILD_FORMAT = "2"  # part of every environment hash: bump it to rebuild all cached images (2: build CA)
CA_CONTEXT_NAME = ".autoenvscaling-build-ca.crt"  # where the host's CA bundle sits in a build context
# Transport only: they never change what a build produces, so they stay out of the cache key.
_TRANSPORT = {name for base in PROXY_VARIABLES for name in (base, base.upper())}
Files = Mapping[str, "tuple[bytes, bool]"]


def docker_errors() -> Any:
    """``docker.errors``, imported when first needed (the SDK stays out of import time)."""
    import docker.errors

    return docker.errors


def short_error(exc: BaseException) -> str:
    """One line from a Docker SDK error (its explanation when the engine gave one)."""
    text = str(getattr(exc, "explanation", None) or exc)
    return " ".join(text.split())[:300]


def env_tag(files: Files, bases: list[str], settings: Mapping[str, str] | None = None) -> str:
    """The cache tag of a build context (Dockerfile already rewritten) over the given base images and
    build settings (build args that shape the result, the target stage)."""
    digest = hashlib.sha256(BUILD_FORMAT.encode())
    for base in bases:
        digest.update(base.encode() + b"\0")
    digest.update(json.dumps(sorted((settings or {}).items())).encode() + b"\0")
    for rel in sorted(files):
        data, executable = files[rel]
        digest.update(rel.encode() + (b"\0x\0" if executable else b"\0-\0") + len(data).to_bytes(8, "big") + data)
    return f"{ENV_REPO}:{digest.hexdigest()[:24]}"


@dataclass(frozen=True)
class BuildAccess:
    """What RUN steps get to reach the registries as the host does: the CA bundle's bytes (None: the
    host has none) and the build args (CA variables pointing at the mounted bundle, proxies, pip
    index settings; file:// URLs are dropped by buildnet, they name host paths)."""

    ca: bytes | None = None
    args: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_host(cls, environ: Mapping[str, str] | None = None) -> "BuildAccess":
        net = host_build_network(dict(os.environ if environ is None else environ), publish=False)
        ca = Path(net.binds[0][0]).read_bytes() if net.binds else None
        args = {k: v for k, v in net.env.items() if k not in CA_VARIABLES or ca is not None}
        return cls(ca=ca, args=args)

    def declared(self) -> list[str]:
        """The args each stage must declare (proxies are predefined args: no declaration needed)."""
        return sorted(k for k in self.args if k not in _TRANSPORT)


@dataclass(frozen=True)
class BuildPlan:
    """One build, ready for the engine: the cache tag, the context tar, what to pass with it, and
    which local base each external FROM became."""

    tag: str
    context: bytes
    dockerfile: str
    buildargs: dict[str, str]
    target: str = ""
    mappings: tuple[dict[str, str], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass
class _Rendered:
    text: str
    bases: list[str] = field(default_factory=list)
    mappings: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class ImageStore:
    """Base images, FROM mapping and cached task builds on one engine. Thread-safe; concurrent work
    on the same image is serialized within the process and, by file locks, across processes."""

    def __init__(self, client: Callable[[], Any], cache_dir: Path, access: BuildAccess | None = None) -> None:
        self._client = client
        self.cache_dir = cache_dir
        self.access = access if access is not None else BuildAccess.from_host()
        self._locks: dict[str, threading.Lock] = {}
        self._run_mounts: bool | None = None

    @property
    def api(self) -> Any:
        return self._client().api

    def base_image(self, base: str) -> str:
        """The engine's image of a local base root filesystem, imported on first use."""
        errors = docker_errors()
        spec = BASES.get(base)
        if spec is None:
            raise BuildError(f"unknown base root filesystem {base!r}", hint=f"known: {', '.join(BASES)}")
        # The recipe, not one build of it: every cache directory (tests, users) builds its own root
        # filesystem, and equal recipes must not re-import (and so rebuild every task image).
        stamp = hashlib.sha256(spec.recipe().encode()).hexdigest()[:16]
        ref = f"{BASE_REPO}:{base}"
        with self._lock(ref):
            with contextlib.suppress(errors.ImageNotFound):
                labels = self.api.inspect_image(ref).get("Config", {}).get("Labels") or {}
                if labels.get(f"{LABEL}.rootfs") == stamp:
                    return ref
            root = base_rootfs(base, cache_dir=self.cache_dir)
            changes = [f"ENV PATH={DEFAULT_PATH}", *(f"ENV {k}={v}" for k, v in spec.env),
                       f"LABEL {LABEL}.rootfs={stamp}", 'CMD ["bash"]']
            self._import(ref, root, changes)
        return ref

    def copy_source(self, image: str) -> tuple[str, str]:
        """(id, note) of the image a ``COPY --from`` names (not an earlier stage): the engine's own
        when it has one of that name (no note), else the well-known tool image provided offline
        (tool_images.py), imported under that very name so the Dockerfile builds unchanged. Raises
        BuildError for anything else, and MissingPrerequisite when the tool image cannot be provided."""
        errors = docker_errors()
        tool = resolve_tool_image(image)
        note = f"COPY --from={image}: provided offline from PyPI's {tool.requirement} wheel" if tool else ""
        with self._lock(f"copy-from-{image}"):
            with contextlib.suppress(errors.ImageNotFound):
                attrs = self.api.inspect_image(image)
                stamp = ((attrs.get("Config") or {}).get("Labels") or {}).get(TOOL_LABEL)
                if stamp is None or tool is None or stamp == tool.key:  # the user's own, or ours and current
                    return str(attrs["Id"]), note if stamp else ""
            if tool is None:
                raise BuildError(f"COPY --from={image}: the image is not on the engine and cannot be pulled "
                                 f"(no registry access)",
                                 hint="load it into the engine (podman load, docker load), or build it in an "
                                      "earlier stage of the Dockerfile")
            provided = provide_tool_image(tool, cache_dir=self.cache_dir)
            self._import(image, provided / "root", [*tool.config, f"LABEL {TOOL_LABEL}={tool.key}"])
            return str(self.api.inspect_image(image)["Id"]), note

    def _import(self, ref: str, root: Path, changes: list[str]) -> None:
        """Import the tree ``root`` as image ``ref`` with the config ``changes`` (streamed as a tar)."""
        # The tag goes in ``repository``: podman ignores the separate ``tag`` parameter.
        reply = self.api.import_image(src=tree_tar(root), stream_src=True, repository=ref, changes=changes)
        try:
            self.api.inspect_image(ref)
        except docker_errors().ImageNotFound:  # an engine that ignored the tag altogether
            last = last_json_object(str(reply)) or {}  # the end of the engine's progress reply
            image_id = last.get("id") or last.get("status", "")
            if not image_id:
                raise SandboxError(f"importing {ref} failed: {str(reply)[-200:]}") from None
            repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "latest")
            self.api.tag(image_id, repo, tag)

    def resolve_mapping(self, image: str) -> tuple[str, dict[str, str]]:
        """(image the engine can use, the mapping used): the image itself when the engine has it,
        else the local base it maps to. Raises BuildError for an unmapped, absent image."""
        with contextlib.suppress(docker_errors().ImageNotFound):
            labels = (self.api.inspect_image(image).get("Config") or {}).get("Labels") or {}
            if STAND_IN_LABEL not in labels:  # not a name the Harbor harness lent one of our stand-ins
                return image, {"image": image, "base": image, "note": "the engine's own image, used as is"}
        mapping = resolve_base(image)
        if mapping is None:
            pattern = image.split(":")[0] + "*"
            raise BuildError(f"image {image} is not on the engine and cannot be pulled (no registry access)",
                             hint=f"load it into the engine, or map it: AUTOENVSCALING_BASE_IMAGES='{pattern}=debian-bookworm'")
        return self.base_image(mapping.base), {"image": image, "base": mapping.base, "note": mapping.note}

    def run_mounts(self) -> bool:
        """Whether the engine's API builder honours ``RUN --mount`` (podman's does; Docker's classic
        builder, the only one the SDK drives, refuses it)."""
        if self._run_mounts is None:
            components = self.api.version().get("Components") or []
            self._run_mounts = any("podman" in str(c.get("Name", "")).lower() for c in components)
        return self._run_mounts

    def plan_build(self, dockerfile_text: str, files: Files, *, dockerfile: str = "Dockerfile",
                   buildargs: Mapping[str, str] | None = None, target: str = "") -> BuildPlan:
        """Everything one build needs: the rendered Dockerfile at ``dockerfile`` in the context, the
        CA bundle when RUN steps can mount it, the build args, and the cache tag over all of it."""
        access = self.access if self.run_mounts() else BuildAccess(
            args={k: v for k, v in self.access.args.items() if k not in CA_VARIABLES})
        rendered = self.render_dockerfile(dockerfile_text, access)
        context = {rel: value for rel, value in files.items() if rel != dockerfile}
        context[dockerfile] = (rendered.text.encode(), False)
        notes = [] if access.ca is not None or self.access.ca is None else [
            "the engine's builder has no RUN mounts: build steps run without the host's CA bundle"]
        if access.ca is not None:
            context[CA_CONTEXT_NAME] = (access.ca, False)
            context[".dockerignore"] = _ignoring_ca(context.get(".dockerignore"))
        args = {**access.args, **(buildargs or {})}
        settings = {k: v for k, v in args.items() if k not in _TRANSPORT}
        if target:
            settings[" target"] = target  # the space keeps it apart from any build arg
        return BuildPlan(tag=env_tag(context, rendered.bases, settings), context=make_tar(context),
                         dockerfile=dockerfile, buildargs=args, target=target,
                         mappings=tuple(rendered.mappings), notes=tuple(rendered.notes + notes))

    def render_dockerfile(self, text: str, access: BuildAccess | None = None) -> _Rendered:
        """The Dockerfile with every external FROM pointed at an image the engine has, and, when
        ``access`` carries a CA bundle or args, each stage declaring those args and each RUN mounting
        the bundle. Also the ids of the base images (part of the cache key) and their mappings."""
        access = access or BuildAccess()
        lines = text.splitlines()
        after: dict[int, list[str]] = {}  # physical line index -> lines inserted after it
        global_args: dict[str, str] = {}
        stages: set[str] = set()
        out = _Rendered(text="")
        seen_from = False
        for inst in parse_dockerfile(text):
            if inst.keyword == "ARG" and not seen_from:  # ARGs before the first FROM parameterize it
                global_args.update({name: value for name, value in arg_decls(inst, global_args) if value is not None})
            elif inst.keyword == "RUN" and access.ca is not None:
                lines[inst.line - 1] = _with_ca_mount(lines[inst.line - 1], inst.line)
            elif inst.keyword in ("COPY", "ADD") and "from" in inst.flag:
                source = expand_vars(inst.flag["from"], global_args)
                if source.lower() not in stages and not source.isdigit():  # an image, not an earlier stage
                    image_id, note = self.copy_source(source)
                    out.bases.append(image_id)
                    out.notes += [f"line {inst.line}: {note}"] if note else []
            if inst.keyword != "FROM":
                continue
            seen_from = True
            lines[inst.line - 1] = self._render_from(inst, lines[inst.line - 1], global_args, stages, out)
            if access.declared():
                after[inst.line - 1] = [f"ARG {name}" for name in access.declared()]
        if not seen_from:
            raise BuildError("the Dockerfile has no FROM", hint="start it with FROM ubuntu:24.04")
        rendered = [part for i, line in enumerate(lines) for part in (line, *after.get(i, ()))]
        out.text = "\n".join(rendered) + "\n"
        return out

    def _render_from(self, inst: Any, physical: str, global_args: dict[str, str], stages: set[str],
                     out: _Rendered) -> str:
        """One FROM line pointed at an image the engine has (earlier stages and scratch unchanged)."""
        tokens = words(inst.args, global_args)
        if not tokens:
            raise BuildError(f"Dockerfile line {inst.line}: FROM needs an image")
        image = tokens[0]
        alias = tokens[2] if len(tokens) >= 3 and tokens[1].lower() == "as" else ""
        earlier_stage = image.lower() in stages
        stages.add(alias.lower())
        if image.lower() == "scratch" or earlier_stage:
            return physical
        ref, mapping = self.resolve_mapping(image)
        out.bases.append(self.api.inspect_image(ref)["Id"])
        out.mappings.append(mapping)
        if not re.match(r"\s*FROM\s", physical, re.I) or physical.rstrip().endswith("\\"):
            raise BuildError(f"Dockerfile line {inst.line}: write FROM on one line")
        flags = " ".join(f"--{k}={v}" if v else f"--{k}" for k, v in inst.flags)
        return " ".join(part for part in ("FROM", flags, ref, "AS" if alias else "", alias) if part)

    def build(self, plan: BuildPlan, cancelled: threading.Event) -> tuple[bool, str]:
        """Build ``plan`` unless its tag exists. Returns (cached, output tail). ``cancelled`` set by
        the caller (its timeout passed) keeps a late result from being tagged."""
        errors = docker_errors()
        with self._lock(plan.tag):
            with contextlib.suppress(errors.ImageNotFound):
                self.api.inspect_image(plan.tag)
                return True, ""
            log: list[str] = []
            image_id = ""
            stream = self.api.build(fileobj=io.BytesIO(plan.context), custom_context=True, rm=True, forcerm=True,
                                    pull=False, network_mode="host", decode=True, labels={LABEL: "1"},
                                    dockerfile=plan.dockerfile, buildargs=plan.buildargs or None,
                                    target=plan.target or None)
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
                    unreachable = unreachable_line(tail)
                    if unreachable:
                        raise BuildError(f"docker build needs a host this machine cannot reach: {unreachable}\n{last}\n{tail}",
                                         hint=NETWORK_HINT)
                    raise BuildError(f"docker build failed: {last}\n{tail}",
                                     hint="fix environment/Dockerfile (output tail in the error details)")
            if not image_id:
                raise BuildError("docker build finished without an image id", hint="\n".join(log[-20:]))
            if cancelled.is_set():
                raise BuildError("docker build finished after its timeout; not cached")
            repo, _, name = plan.tag.partition(":")
            self.api.tag(image_id, repo, name)
            return False, "\n".join(log[-60:])

    @contextlib.contextmanager
    def _lock(self, key: str) -> Iterator[None]:
        """Hold a thread lock and a file lock (rootfs.file_lock) on ``key`` together."""
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
        with self._locks.setdefault(key, threading.Lock()), file_lock(self.cache_dir / "docker" / f".{safe}.lock"):
            yield


def _ignoring_ca(dockerignore: tuple[bytes, bool] | None) -> tuple[bytes, bool]:
    """A .dockerignore that keeps the CA bundle out of every COPY/ADD (``COPY . /app`` included):
    RUN bind mounts read the context unfiltered, COPY honours the file. One we add ignores itself
    too, so a context that had none copies exactly what it did."""
    if dockerignore is None:
        return f"{CA_CONTEXT_NAME}\n.dockerignore\n".encode(), False
    data, executable = dockerignore
    return data.rstrip(b"\n") + f"\n{CA_CONTEXT_NAME}\n".encode(), executable


def _with_ca_mount(physical: str, line: int) -> str:
    """A RUN line with a read-only bind mount of the context's CA bundle added after the keyword."""
    match = re.match(r"(\s*RUN)(?=\s|$)", physical, re.I)
    if match is None:
        raise BuildError(f"Dockerfile line {line}: write RUN at the start of its line")
    mount = f" --mount=type=bind,source={CA_CONTEXT_NAME},target={CA_TARGET},readonly"
    return match.group(1) + mount + physical[match.end():]

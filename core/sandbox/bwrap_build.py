"""The Dockerfile subset the bwrap backend builds without a container engine: plans and layers
(the Dockerfile itself is read by dockerfile.py).

Supported: one ``FROM`` (mapped to a local base root, see rootfs.resolve_base), ``RUN`` (shell,
exec and heredoc forms; ``--network``; cache mounts are ignored), ``COPY``/``ADD`` from the build
context (environment/, honouring .dockerignore; ``--chmod``; ADD extracts local tar archives) or
from a well-known tool image (``COPY --from=ghcr.io/astral-sh/uv:latest``, provided offline by
tool_images.py), ``WORKDIR``, ``ENV``, ``ARG``, ``USER``, ``SHELL``, and the metadata instructions (``LABEL``,
``EXPOSE``, ``CMD``, ``ENTRYPOINT``, ``HEALTHCHECK``, ``STOPSIGNAL``, ``VOLUME``, ``MAINTAINER``,
``ONBUILD``), which are recorded. Anything else (multi-stage builds, other ``COPY --from``, ``ADD`` of a URL,
an unmapped base image, secret/ssh/bind mounts) is refused with UnsupportedDockerfile naming the docker
backend, before anything is built.

Every instruction that changes files becomes a layer (rootfs.LayerStore) keyed by a hash of its
parent's key and everything that can influence its result: the command, shell, environment, workdir,
user and the bytes of copied files. RUN and COPY execute inside a bwrap jail over the layers so far
(network shared for RUN only), as the sandbox uid mapped to root: a hostile build can neither read the
host nor plant a symlink that makes a host-side write land outside its layer.
"""

from __future__ import annotations

import asyncio
import hashlib
import platform
import posixpath
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..archive import make_tar
from ..errors import AESError, BuildError, BuildTimeout, UnsupportedDockerfile
from ..tasks import Task, TaskFile
from .base import EnvironmentDetails, PreparedEnvironment, SandboxPolicy
from .buildnet import NETWORK_HINT, host_build_network, unreachable_line
from .dockerfile import HEREDOC, Context, Instruction, arg_decls, expand_vars, pairs, parse_dockerfile, words
from .isolation import DEFAULT_PATH, UID_RANGE
from .jail import Jail
from .launcher import limits_for
from .rootfs import BASES, LayerStore, layer_key, resolve_base
from .tool_images import ToolImage, provide_tool_image, resolve_tool_image, tool_image_facts, tool_image_files

DOCKER_HINT = "use --backend docker"
LAYER_KEYWORDS = {"RUN", "COPY", "ADD", "WORKDIR"}
META_KEYWORDS = {"ENV", "ARG", "USER", "LABEL", "EXPOSE", "CMD", "ENTRYPOINT", "HEALTHCHECK", "SHELL",
                 "STOPSIGNAL", "VOLUME", "MAINTAINER", "ONBUILD"}
RECORDED = ("stopsignal", "volume", "maintainer", "onbuild")  # kept in the plan's metadata, not applied
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


# -- planning ---------------------------------------------------------------------------------------
@dataclass
class Step:
    """One layer to build: the key payload and how to produce the layer inside a jail."""

    instruction: Instruction
    payload: dict[str, Any]
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    user: str | None = None
    stdin: bytes | None = None
    network: bool = False
    tool: ToolImage | None = None  # COPY --from a well-known tool image: its files come at build time
    sources: tuple[str, ...] = ()  # that COPY's sources, resolved again in the provided image


@dataclass
class BuildPlan:
    image: str
    base: str
    steps: list[Step] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    user: str | None = None
    shell: list[str] = field(default_factory=lambda: ["/bin/sh", "-c"])
    metadata: dict[str, Any] = field(default_factory=dict)  # labels, cmd, entrypoint, exposed, ...
    notes: list[str] = field(default_factory=list)  # what was accepted but not applied


def _refuse(inst: Instruction, why: str) -> UnsupportedDockerfile:
    return UnsupportedDockerfile(f"Dockerfile line {inst.line}: {why}; {DOCKER_HINT}",
                                 hint="the bwrap backend builds a subset of Dockerfiles (see sandbox/dockerfile.py)")


def _platform_args() -> dict[str, str]:
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return {"TARGETOS": "linux", "BUILDOS": "linux", "TARGETARCH": arch, "BUILDARCH": arch,
            "TARGETPLATFORM": f"linux/{arch}", "BUILDPLATFORM": f"linux/{arch}", "TARGETVARIANT": ""}


def plan_build(task: Task) -> BuildPlan:
    """Parse and check the task's environment, resolve variables and the build context, and list the
    layers to build. Pure (no I/O): every refusal happens here, before anything is built."""
    env_files = task.environment_files
    if any(name in env_files for name in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml")):
        raise UnsupportedDockerfile(f"task {task.name}: docker-compose environments are not supported by bwrap; "
                                    f"{DOCKER_HINT}")
    text = task.dockerfile
    if text is None:
        image = task.config.environment.docker_image
        if not image:
            raise BuildError(f"task {task.name} has no environment/Dockerfile and no [environment].docker_image",
                             hint="add environment/Dockerfile (FROM ubuntu:24.04 is the usual start)")
        text = f"FROM {image}\n"
    instructions = parse_dockerfile(text)
    context = Context(env_files)
    plan: BuildPlan | None = None
    global_args: dict[str, str] = {}
    args: dict[str, str] = {}
    for inst in instructions:
        kw = inst.keyword
        if kw not in LAYER_KEYWORDS | META_KEYWORDS | {"FROM"}:
            raise _refuse(inst, f"instruction {kw} is not supported")
        if kw == "FROM":
            if plan is not None:
                raise _refuse(inst, "multi-stage builds (a second FROM) are not supported")
            plan = _from(inst, global_args)
            continue
        if plan is None:
            if kw != "ARG":
                raise BuildError(f"Dockerfile line {inst.line}: {kw} before FROM", hint="a Dockerfile starts with FROM")
            global_args.update({name: value for name, value in arg_decls(inst, {}) if value is not None})
            continue
        variables = {**args, **plan.env}
        if kw == "ARG":
            for name, value in arg_decls(inst, variables):
                value = value if value is not None else global_args.get(name, _platform_args().get(name))
                if value is not None:
                    args[name] = value
        elif kw == "ENV":
            plan.env.update(pairs(inst, variables))
        elif kw == "LABEL":
            plan.metadata.setdefault("labels", {}).update(pairs(inst, variables))
        elif kw == "USER":
            plan.user = " ".join(words(inst.args, variables)) or None
        elif kw == "WORKDIR":
            path = " ".join(words(inst.args, variables))
            plan.workdir = posixpath.normpath(posixpath.join(plan.workdir, path))
            # As BuildKit does: a directory WORKDIR creates belongs to the current USER.
            plan.steps.append(Step(inst, {"op": "workdir", "path": plan.workdir, "user": plan.user},
                                   ["/bin/sh", "-c", _WORKDIR, "sh", plan.workdir, plan.user or ""]))
        elif kw == "SHELL":
            shell = inst.exec_form()
            if not shell:
                raise BuildError(f"Dockerfile line {inst.line}: SHELL needs the JSON form",
                                 hint='e.g. SHELL ["/bin/bash", "-c"]')
            plan.shell = shell
        elif kw in ("CMD", "ENTRYPOINT"):
            plan.metadata[kw.lower()] = inst.exec_form() or [*plan.shell, inst.args]
        elif kw == "EXPOSE":
            plan.metadata.setdefault("exposed", []).extend(words(inst.args, variables))
        elif kw == "HEALTHCHECK":
            plan.metadata["healthcheck"] = inst.summary(400)
        elif kw.lower() in RECORDED:
            plan.notes.append(f"line {inst.line}: {kw} recorded, not applied")
            plan.metadata.setdefault(kw.lower(), []).append(inst.args)
        elif kw == "RUN":
            plan.steps.append(_run(inst, plan, args))
        else:  # COPY / ADD
            plan.steps.append(_copy(inst, plan, context, variables))
    if plan is None:
        raise BuildError(f"task {task.name}: the Dockerfile has no FROM", hint="start it with FROM ubuntu:24.04")
    return plan


def _from(inst: Instruction, global_args: dict[str, str]) -> BuildPlan:
    tokens = words(inst.args, global_args)
    if not tokens:
        raise BuildError(f"Dockerfile line {inst.line}: FROM needs an image")
    image = tokens[0]
    if image.lower() == "scratch":
        raise _refuse(inst, "FROM scratch has no local base image")
    mapping = resolve_base(image)
    if mapping is None:
        raise UnsupportedDockerfile(
            f"Dockerfile line {inst.line}: FROM {image} has no local base image; {DOCKER_HINT} with the image "
            f"loaded into the engine",
            hint=f"or map it: AUTOENVSCALING_BASE_IMAGES='{image.split(':')[0]}*=debian-bookworm' "
                 f"(known images: autoenvscaling doctor)")
    if mapping.base not in BASES:
        raise BuildError(f"Dockerfile line {inst.line}: FROM {image} is mapped to unknown base {mapping.base!r}",
                         hint=f"known bases: {', '.join(BASES)}")
    # Every image we map to defines PATH in its config, so "ENV PATH=/x:$PATH" extends it.
    plan = BuildPlan(image=image, base=mapping.base, env={"PATH": DEFAULT_PATH, **dict(BASES[mapping.base].env)})
    plan.metadata["base_mapping"] = {"image": image, "base": mapping.base, "note": mapping.note}
    if mapping.note:
        plan.notes.append(f"line {inst.line}: FROM {image}: {mapping.note}")
    return plan


_WORKDIR = ('[ -d "$1" ] && exit 0; mkdir -p -- "$1" || exit 1; [ -z "$2" ] && exit 0; '
            'case $2 in *:*) owner=$2 ;; *) owner="$2:$(id -g -- "$2")" || exit 1 ;; esac; chown -- "$owner" "$1"')


def _run(inst: Instruction, plan: BuildPlan, args: dict[str, str]) -> Step:
    network = True
    for name, value in inst.flags:
        if name == "mount":
            kind = dict(part.partition("=")[::2] for part in value.split(",")).get("type", "bind")
            if kind != "cache":
                raise _refuse(inst, f"RUN --mount=type={kind} is not supported")
            plan.notes.append(f"line {inst.line}: RUN --mount=type=cache ignored (runs without the cache)")
        elif name == "network":
            network = value != "none"
        else:
            raise _refuse(inst, f"RUN --{name} is not supported")
    stdin: bytes | None = None
    argv = inst.exec_form()
    if argv is None:
        command = inst.args
        if inst.heredocs and not HEREDOC.sub("", command).strip():
            body = inst.heredocs[0].body  # RUN <<EOF: the body is the script
            if body.startswith("#!"):
                argv, stdin = body[2:].splitlines()[0].split(), body.encode()
            else:
                argv = [*plan.shell, body]
        else:
            for doc in inst.heredocs:  # the shell itself handles heredocs fed to a command
                command += "\n" + doc.body + doc.terminator
            argv = [*plan.shell, command]
    env = {"PATH": DEFAULT_PATH, **args, **plan.env}
    payload = {"op": "run", "argv": argv, "env": env, "cwd": plan.workdir, "user": plan.user,
               "network": network, "stdin": hashlib.sha256(stdin).hexdigest() if stdin else None}
    return Step(inst, payload, argv, env=env, cwd=plan.workdir, user=plan.user, stdin=stdin, network=network)


def _copy(inst: Instruction, plan: BuildPlan, context: Context, variables: dict[str, str]) -> Step:
    chmod = chown = ""
    tool: ToolImage | None = None
    for name, value in inst.flags:
        if name == "from":
            tool = _tool_image(inst, plan, expand_vars(value, variables))
        elif name == "chmod":
            if not re.fullmatch(r"[0-7]{3,4}|[ugoa]*[-+=][rwxXst]*(,[ugoa]*[-+=][rwxXst]*)*", value):
                raise BuildError(f"Dockerfile line {inst.line}: bad --chmod value {value!r}")
            chmod = value
        elif name == "chown":
            chown = expand_vars(value, variables)
            if not re.fullmatch(r"[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)?", chown):
                raise BuildError(f"Dockerfile line {inst.line}: bad --chown value {value!r}")
        elif name != "link":
            raise _refuse(inst, f"{inst.keyword} --{name} is not supported")
    tokens = inst.exec_form() or words(inst.args, variables)
    if len(tokens) < 2:
        raise BuildError(f"Dockerfile line {inst.line}: {inst.keyword} needs a source and a destination")
    *sources, dest = tokens
    dest_dir = dest.endswith("/") or len(sources) > 1
    dest = posixpath.normpath(posixpath.join(plan.workdir, dest))
    # From a tool image, sources resolve in its layout now (refusals first) and in its files at build time.
    entries = _entries(inst, sources, context if tool is None else _tool_context(inst, tool, sources), variables)
    dest_dir = dest_dir or len(entries) > 1
    payload = {"op": "copy", "dest": dest, "dest_dir": dest_dir, "chmod": chmod, "chown": chown,
               "sources": [[kind, name, sorted((rel, f.executable, hashlib.sha256(f.data).hexdigest())
                                                for rel, f in files.items())] for kind, name, files in entries]}
    if tool is not None:
        payload["from"] = tool.requirement  # the layer key gets the provided files' digest at build time
    script = ["set -e", 't=$(mktemp -d /.aes-copy.XXXXXX)', 'trap \'rm -rf "$t"\' EXIT',
              'tar -x -f - -C "$t" --no-same-owner', 'dest=$1']
    if chmod:
        script.append('find "$t" -mindepth 2 -exec chmod -- "$2" {} +')
    if chown:  # names resolve in the image being built (its /etc/passwd), as Docker does; a user
        # without a group gets the group of the same number, as in Docker
        script += ['spec=$3; case $spec in *:*) ;; *) spec="$spec:$(id -u -- "$spec" 2>/dev/null || echo "$spec")";; esac',
                   'find "$t" -mindepth 2 -exec chown -h -- "$spec" {} +']
    for index, (kind, name, _) in enumerate(entries):
        src = f'"$t"/{index}/{_sh(name)}'
        if kind == "dir":
            script.append(f'mkdir -p -- "$dest" && cp -a -- "$t"/{index}/. "$dest"/')
        elif kind == "archive":
            script.append(f'mkdir -p -- "$dest" && tar -x -f {src} -C "$dest" --no-same-owner')
        elif dest_dir:
            script.append(f'mkdir -p -- "$dest" && cp -a -- {src} "$dest"/')
        else:
            script.append(f'if [ -d "$dest" ]; then cp -a -- {src} "$dest"/; '
                          f'else mkdir -p -- "$(dirname -- "$dest")" && cp -a -- {src} "$dest"; fi')
    argv = ["/bin/sh", "-c", "\n".join(script), "sh", dest, chmod, chown]
    return Step(inst, payload, argv, env={"PATH": DEFAULT_PATH}, stdin=None if tool else _archive(entries),
                tool=tool, sources=tuple(sources))


def _entries(inst: Instruction, sources: list[str], context: Context,
             variables: dict[str, str]) -> list[tuple[str, str, dict[str, TaskFile]]]:
    """What one COPY/ADD copies: (kind, name, files relative to it) per source, in order."""
    heredocs = {doc.name: doc for doc in inst.heredocs}
    entries: list[tuple[str, str, dict[str, TaskFile]]] = []
    for source in sources:
        match = HEREDOC.fullmatch(source)
        if match and match.group(3) in heredocs:
            doc = heredocs[match.group(3)]
            body = expand_vars(doc.body, variables) if doc.expand else doc.body
            entries.append(("file", doc.name, {doc.name: TaskFile(data=body.encode())}))
            continue
        if re.match(r"^[a-z][a-z0-9+.-]*://|^git@", source):
            raise _refuse(inst, f"{inst.keyword} of a URL ({source}) is not supported")
        for kind, path in context.resolve(source, inst):
            name = posixpath.basename(path)
            if kind == "dir":
                entries.append(("dir", name, context.under(path)))
            elif inst.keyword == "ADD" and path.endswith(ARCHIVE_SUFFIXES):
                entries.append(("archive", name, {name: context.files[path]}))
            else:
                entries.append(("file", name, {name: context.files[path]}))
    return entries


def _tool_image(inst: Instruction, plan: BuildPlan, image: str) -> ToolImage:
    """The well-known tool image a ``COPY --from`` names (tool_images.py); anything else, an earlier
    stage or another image, is refused."""
    tool = resolve_tool_image(image)
    if tool is None:
        raise _refuse(inst, f"{inst.keyword} --from={image} is not supported (only well-known tool images, "
                            f"such as ghcr.io/astral-sh/uv, are provided offline)")
    plan.notes.append(f"line {inst.line}: {inst.keyword} --from={image}: provided offline from PyPI's "
                      f"{tool.requirement} wheel")
    return tool


def _tool_context(inst: Instruction, tool: ToolImage, sources: list[str]) -> Context:
    """The tool image's layout as a build context, once it is clear that it holds every source."""
    context = Context(tool.layout())
    for source in sources:
        try:
            context.resolve(source, inst)
        except BuildError:
            raise BuildError(f"Dockerfile line {inst.line}: {source} is not in {tool.image}",
                             hint=f"it holds {', '.join('/' + f for f in tool.files)}") from None
    return context


def _tool_step(step: Step, provided: Path) -> Step:
    """A COPY --from a tool image with its files: the sources resolved again in the provided image."""
    entries = _entries(step.instruction, list(step.sources), Context(tool_image_files(provided)), {})
    return replace(step, stdin=_archive(entries))


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _archive(entries: list[tuple[str, str, dict[str, TaskFile]]]) -> bytes:
    """Members ``<index>/<path>`` (directory ``<index>`` even when empty): the script above places each
    source at its destination."""
    files = {f"{index}/{rel}": (f.data, f.executable)
             for index, (_kind, _name, entry) in enumerate(entries) for rel, f in entry.items()}
    return make_tar(files, dirs=[str(index) for index in range(len(entries))])


# -- building ----------------------------------------------------------------------------------------
async def build_environment(task: Task, store: LayerStore, policy: SandboxPolicy,
                            plan: BuildPlan) -> PreparedEnvironment:
    """Build (or find cached) every layer of the task's ``plan_build`` plan; the result names the stack."""
    start = time.monotonic()
    timeout = task.config.environment.build_timeout_sec
    key, built = await store.base_layer(plan.base)
    # The base root is shared infrastructure built once per machine: the task's clock starts after it.
    deadline = time.monotonic() + timeout
    keys, stack, cached = [key], [store.fs(key)], not built
    for number, step in enumerate(plan.steps, 1):
        provided = await _provide(step, store) if step.tool is not None else None
        payload = step.payload if provided is None else {**step.payload, "digest": tool_image_facts(provided)["digest"]}
        key = layer_key(key, payload)
        if not store.has(key):
            store.raise_if_failed(key)
            async with store.lock(key, deadline):
                if not store.has(key):
                    cached = False
                    if provided is not None:
                        step = await asyncio.to_thread(_tool_step, step, provided)
                    try:
                        await _build_layer(store, key, step, stack, policy, deadline, timeout,
                                           f"step {number}/{len(plan.steps)}")
                    except BuildError as exc:
                        if getattr(exc, "remember", False):
                            store.failed[key] = exc
                        raise
        keys.append(key)
        if not store.meta(key).get("empty"):
            stack.insert(0, store.fs(key))
    facts = store.read_extra(key, "inspect.json")
    if facts is None:
        facts = await _inspect(stack, policy)
        store.write_extra(key, "inspect.json", facts)
    meta = plan.metadata
    details = EnvironmentDetails(
        image=plan.image, entrypoint=meta.get("entrypoint"), base_mapping=meta.get("base_mapping"), notes=plan.notes,
        lower=[str(p) for p in stack], layers=keys, base=plan.base, has_bash=facts.get("has_bash", True),
        cmd=meta.get("cmd"), labels=meta.get("labels", {}), exposed=meta.get("exposed", []),
        healthcheck=meta.get("healthcheck"), recorded={kw: meta[kw] for kw in RECORDED if kw in meta})
    return PreparedEnvironment(backend="bwrap", ref=key, workdir=plan.workdir, env=plan.env, user=plan.user,
                               build_seconds=time.monotonic() - start, cached=cached, details=details)


async def _provide(step: Step, store: LayerStore) -> Path:
    """The tool image a COPY --from names, provided on the host (downloaded once, then cached)."""
    assert step.tool is not None
    try:
        return await asyncio.to_thread(provide_tool_image, step.tool, cache_dir=store.cache_dir)
    except AESError as exc:
        raise type(exc)(f"Dockerfile line {step.instruction.line}: {exc.message}", hint=exc.hint) from exc


# What a build step prints when it hits the sandbox's own limits rather than a mistake in the
# Dockerfile: ids beyond the mapped range, or kernel features a user namespace does not grant.
_SANDBOX_LIMIT = re.compile(r"(chown|chgrp|changing (ownership|group)|setgroups|mknod|mount)[^\n]*"
                            r"(Invalid argument|Operation not permitted)", re.I)


async def _build_layer(store: LayerStore, key: str, step: Step, stack: list[Path], policy: SandboxPolicy,
                       deadline: float, timeout: float, where: str) -> None:
    staging = store.stage(key)
    inst = step.instruction
    network = host_build_network() if step.network else None
    try:
        jail = Jail(list(stack), memory_mb=policy.max_memory_mb, pids=max(policy.pids, 1024),
                    limits=limits_for(policy), network=step.network, upper=staging / "fs", work=staging / "work",
                    binds=list(network.binds) if network else None)
        try:
            jail.open()
            identity = await jail.identity(step.user)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BuildTimeout(f"build timed out after {timeout:g}s before {where}: {inst.summary(80)}",
                                 hint="raise [environment].build_timeout_sec in task.toml")
            env = {**(network.env if network else {}), "HOME": identity.home, **step.env}
            out = await jail.run(step.argv, env=env, cwd=step.cwd, identity=identity,
                                 stdin=step.stdin, timeout=remaining, limit=1 << 20, tail_bytes=4000)
        finally:
            jail.close()
        tail = out.tail.decode("utf-8", errors="replace").strip()
        if out.timed_out:
            raise _remembered(BuildTimeout(
                f"build timed out after {timeout:g}s at {where} (line {inst.line}): {inst.summary(80)}",
                hint="raise [environment].build_timeout_sec in task.toml"))
        if out.exit_code != 0:
            raise _remembered(_step_failed(inst, out.exit_code, tail, as_root=identity.uid == 0))
        store.commit(key, staging, {"instruction": inst.summary(400), "line": inst.line,
                                    "seconds": round(out.seconds, 3), "output_tail": tail[-2000:]})
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, BuildError) or not isinstance(exc, Exception):
            raise
        message = exc.message if isinstance(exc, AESError) else str(exc)
        raise BuildError(f"building {where} (line {inst.line}) failed: {message}",
                         hint=getattr(exc, "hint", None)) from exc


def _step_failed(inst: Instruction, code: int | None, tail: str, *, as_root: bool) -> BuildError:
    """The error for a failed step: a sandbox limit when root's step says so (a USER's chown fails
    under Docker too: that one is the Dockerfile's), else the instruction."""
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
    limit = next((ln for ln in lines if _SANDBOX_LIMIT.search(ln)), None) if as_root else None
    if limit:
        return BuildError(f"sandbox limit at Dockerfile line {inst.line} ({inst.summary(60)}): {limit[:200]} -- "
                          f"the bwrap sandbox maps ids 0-{UID_RANGE - 1} and grants no host privileges\n{tail}",
                          hint=f"{DOCKER_HINT} (a container engine grants what this step needs)")
    unreachable = unreachable_line(tail)
    if unreachable:
        return BuildError(f"{inst.keyword} at Dockerfile line {inst.line} needs a host this machine cannot reach: "
                          f"{unreachable} ({inst.summary(60)})\n{tail}", hint=NETWORK_HINT)
    last = lines[-1] if lines else "no output"
    return BuildError(f"{inst.keyword} failed with exit code {code} at Dockerfile line {inst.line}: "
                      f"{inst.summary(80)} -- {last[:200]}\n{tail}",
                      hint="fix that instruction in environment/Dockerfile (output tail in the error details)")


def _remembered(exc: BuildError) -> BuildError:
    """Mark an error as a property of the layer (its inputs fail), so the batch does not retry it."""
    exc.remember = True  # type: ignore[attr-defined]
    return exc


async def _inspect(stack: list[Path], policy: SandboxPolicy) -> dict[str, Any]:
    """Facts about the finished image that the runtime needs (which shell exists)."""
    jail = Jail(list(stack), memory_mb=256, pids=64, limits=limits_for(policy), network=False, storage_mb=16)
    try:
        jail.open()
        out = await jail.run(["/bin/sh", "-c", "[ -x /bin/bash ] && echo bash || echo sh"], timeout=30)
    finally:
        jail.close()
    if out.exit_code != 0:
        raise BuildError("the built environment does not start: /bin/sh is missing or broken",
                         hint=out.stderr.decode(errors="replace")[-200:] or None)
    return {"has_bash": out.stdout.strip() == b"bash"}

"""The Dockerfile subset the bwrap backend builds without a container engine.

Supported: one ``FROM`` (mapped to a local base root, see rootfs.map_base_image), ``RUN`` (shell,
exec and heredoc forms; ``--network``; cache mounts are ignored), ``COPY``/``ADD`` from the build
context (environment/, honouring .dockerignore; ``--chmod``; ADD extracts local tar archives),
``WORKDIR``, ``ENV``, ``ARG``, ``USER``, ``SHELL``, and the metadata instructions (``LABEL``,
``EXPOSE``, ``CMD``, ``ENTRYPOINT``, ``HEALTHCHECK``, ``STOPSIGNAL``, ``VOLUME``, ``MAINTAINER``,
``ONBUILD``), which are recorded. Anything else (multi-stage builds, ``COPY --from``, ``ADD`` of a URL,
an unmapped base image, secret/ssh/bind mounts) is refused with UnsupportedDockerfile naming the docker
backend, before anything is built.

Every instruction that changes files becomes a layer (rootfs.LayerStore) keyed by a hash of its
parent's key and everything that can influence its result: the command, shell, environment, workdir,
user and the bytes of copied files. RUN and COPY execute inside a bwrap jail over the layers so far
(network shared for RUN only), as the sandbox uid mapped to root: a hostile build can neither read the
host nor plant a symlink that makes a host-side write land outside its layer.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
import posixpath
import re
import shutil
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AESError, BuildError, BuildTimeout, UnsupportedDockerfile
from ..tasks import Task, TaskFile
from .base import PreparedEnvironment, SandboxPolicy
from .isolation import DEFAULT_PATH, UID_RANGE, Jail, limits_for
from .buildnet import host_build_network
from .rootfs import BASES, LayerStore, layer_key, resolve_base

DOCKER_HINT = "use --backend docker"
LAYER_KEYWORDS = {"RUN", "COPY", "ADD", "WORKDIR"}
META_KEYWORDS = {"ENV", "ARG", "USER", "LABEL", "EXPOSE", "CMD", "ENTRYPOINT", "HEALTHCHECK", "SHELL",
                 "STOPSIGNAL", "VOLUME", "MAINTAINER", "ONBUILD"}
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
_VAR = re.compile(r"\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


# -- parsing ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Heredoc:
    name: str
    body: str  # as written (tabs kept; the shell strips them for <<-)
    expand: bool  # an unquoted delimiter: variables are expanded
    strip_tabs: bool
    terminator: str  # the closing line as written


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str  # the text after the keyword and its --flags, continuations joined
    line: int
    flags: tuple[tuple[str, str], ...] = ()
    heredocs: tuple[Heredoc, ...] = ()

    @property
    def flag(self) -> dict[str, str]:
        return dict(self.flags)

    def exec_form(self) -> list[str] | None:
        """The JSON array form (``["a", "b"]``), or None for the shell form."""
        text = self.args.strip()
        if not text.startswith("["):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None

    def summary(self, width: int = 100) -> str:
        text = " ".join(f"--{k}={v}" if v else f"--{k}" for k, v in self.flags)
        text = f"{self.keyword} {text + ' ' if text else ''}{self.args.strip()}"
        return text if len(text) <= width else text[: width - 3] + "..."


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined, comments dropped and heredoc bodies attached."""
    lines = text.splitlines()
    escape = "\\"
    for line in lines:  # parser directives: leading "# key=value" comments
        match = re.match(r"\s*#\s*([a-zA-Z]+)\s*=\s*(\S+)\s*$", line)
        if not match:
            break
        if match.group(1).lower() == "escape" and match.group(2) in ("\\", "`"):
            escape = match.group(2)
    out: list[Instruction] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start, parts = i + 1, []
        while True:
            current = lines[i].rstrip()
            i += 1
            if current.endswith(escape):
                parts.append(current[:-1])
                while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                    i += 1  # comments and blank lines inside a continuation are dropped
                if i < len(lines):
                    continue
            else:
                parts.append(current)
            break
        keyword, rest = re.match(r"(\S+)\s*(.*)", "".join(parts).strip(), re.S).groups()  # type: ignore[union-attr]
        keyword = keyword.upper()
        flags, rest = _split_flags(rest) if keyword in {"FROM", "RUN", "COPY", "ADD", "HEALTHCHECK"} else ((), rest)
        heredocs: list[Heredoc] = []
        if keyword in {"RUN", "COPY", "ADD"}:
            for match in _HEREDOC.finditer(rest):
                strip, quote, name = match.group(1) == "-", match.group(2), match.group(3)
                body: list[str] = []
                while i < len(lines):
                    candidate = lines[i].lstrip("\t") if strip else lines[i]
                    i += 1
                    if candidate == name:
                        heredocs.append(Heredoc(name, "\n".join(body) + ("\n" if body else ""), not quote,
                                                strip, lines[i - 1]))
                        break
                    body.append(lines[i - 1])
                else:
                    raise BuildError(f"Dockerfile line {start}: heredoc <<{name} is never closed")
        out.append(Instruction(keyword, rest.strip(), start, tuple(flags), tuple(heredocs)))
    return out


def _split_flags(rest: str) -> tuple[list[tuple[str, str]], str]:
    flags = []
    text = rest.lstrip()
    while text.startswith("--"):
        token, _, text = text.partition(" ")
        name, _, value = token[2:].partition("=")
        flags.append((name.lower(), value))
        text = text.lstrip()
    return flags, text


# -- words and variables ------------------------------------------------------------------------------
def expand_vars(text: str, env: dict[str, str]) -> str:
    """``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR:+alt}`` (and the forms without ':'); ``\\$``
    stays a literal dollar."""
    def repl(match: re.Match[str]) -> str:
        if match.group(0) == "\\$":
            return "$"
        name = match.group(1) or match.group(4)
        value = env.get(name)
        op, word = match.group(2), match.group(3)
        if op in (":-", "-"):
            unset = value is None or (op == ":-" and value == "")
            return expand_vars(word, env) if unset else value or ""
        if op in (":+", "+"):
            present = value is not None and (op == "+" or value != "")
            return expand_vars(word, env) if present else ""
        return value or ""

    return _VAR.sub(repl, text)


def words(text: str, env: dict[str, str]) -> list[str]:
    """Split like Docker's shell lexer: whitespace separates, quotes group (single quotes are
    literal), backslash escapes, variables expand outside single quotes."""
    out: list[str] = []
    cur: list[str] = []
    have = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            if have:
                out.append("".join(cur))
                cur, have = [], False
            i += 1
            continue
        have = True
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise BuildError(f"unterminated quote in: {text[:80]}")
            cur.append(text[i + 1:j])
            i = j + 1
        elif c == '"':
            j = i + 1
            chunk: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$':
                    chunk.append("\\$" if text[j + 1] == "$" else text[j + 1])
                    j += 2
                else:
                    chunk.append(text[j])
                    j += 1
            if j >= n:
                raise BuildError(f"unterminated quote in: {text[:80]}")
            cur.append(expand_vars("".join(chunk), env))
            i = j + 1
        elif c == "\\" and i + 1 < n:
            cur.append(text[i + 1])  # an escaped character is literal (no expansion)
            i += 2
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "'\"\\":
                j += 1
            cur.append(expand_vars(text[i:j], env))
            i = j
    if have:
        out.append("".join(cur))
    return out


def _pairs(inst: Instruction, env: dict[str, str]) -> list[tuple[str, str]]:
    """``KEY=VALUE ...`` (or the legacy ``KEY VALUE`` of ENV/LABEL)."""
    tokens = words(inst.args, env)
    if not tokens:
        raise BuildError(f"Dockerfile line {inst.line}: {inst.keyword} needs arguments")
    if "=" not in tokens[0]:
        key, _, value = inst.args.strip().partition(" ")
        return [(key, " ".join(words(value, env)) if value.strip() else "")]
    pairs = []
    for token in tokens:
        key, eq, value = token.partition("=")
        if not eq or not key:
            raise BuildError(f"Dockerfile line {inst.line}: {inst.keyword} expects KEY=VALUE, got {token!r}")
        pairs.append((key, value))
    return pairs


# -- the build context -----------------------------------------------------------------------------
def _pattern(pattern: str) -> re.Pattern[str]:
    """A .dockerignore / COPY glob as a regex over '/'-separated relative paths (``**`` spans dirs)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape("["))
                i += 1
            else:
                body = pattern[i + 1:j]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = j + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _clean(path: str) -> str:
    path = posixpath.normpath("/" + path).lstrip("/")
    return "" if path == "." else path


class Context:
    """The files of environment/ that a COPY can see (after .dockerignore)."""

    def __init__(self, files: dict[str, TaskFile]) -> None:
        ignore = files.get(".dockerignore")
        rules = []
        for raw in (ignore.text.splitlines() if ignore else []):
            raw = raw.strip()
            if raw and not raw.startswith("#"):
                negate = raw.startswith("!")
                rules.append((negate, _pattern(_clean(raw.lstrip("!")))))
        self.files = {rel: f for rel, f in files.items() if not self._ignored(rel, rules)}
        self.dirs = {"/".join(rel.split("/")[:i]) for rel in self.files for i in range(1, rel.count("/") + 1)}

    @staticmethod
    def _ignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
        parts = rel.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        ignored = False
        for negate, rx in rules:  # the last matching rule wins
            if any(rx.match(p) for p in prefixes):
                ignored = not negate
        return ignored

    def resolve(self, source: str, inst: Instruction) -> list[tuple[str, str]]:
        """(kind, context path) for one COPY source: kind is "dir" or "file"."""
        rel = posixpath.normpath(source.lstrip("/") or ".")
        if rel == ".." or rel.startswith("../"):
            raise BuildError(f"Dockerfile line {inst.line}: {source!r} is outside the build context")
        path = _clean(source)
        if path == "":
            return [("dir", "")]
        if any(c in path for c in "*?["):
            rx = _pattern(path)
            found = sorted([("file", p) for p in self.files if rx.match(p)] +
                           [("dir", d) for d in self.dirs if rx.match(d)], key=lambda x: x[1])
            if not found:
                raise BuildError(f"Dockerfile line {inst.line}: no file in environment/ matches {source!r}")
            return found
        if path in self.files:
            return [("file", path)]
        if path in self.dirs:
            return [("dir", path)]
        raise BuildError(f"Dockerfile line {inst.line}: {inst.keyword} source {source!r} is not in environment/",
                         hint="COPY sources are relative to the task's environment/ directory")

    def under(self, directory: str) -> dict[str, TaskFile]:
        prefix = directory + "/" if directory else ""
        return {rel[len(prefix):]: f for rel, f in self.files.items() if rel.startswith(prefix)}


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


PLATFORM_ARGS = {"TARGETOS": "linux", "BUILDOS": "linux"}


def _platform_args() -> dict[str, str]:
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return {**PLATFORM_ARGS, "TARGETARCH": arch, "BUILDARCH": arch, "TARGETPLATFORM": f"linux/{arch}",
            "BUILDPLATFORM": f"linux/{arch}", "TARGETVARIANT": ""}


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
            for name, value in _arg_decls(inst, {}):
                if value is not None:
                    global_args[name] = value
            continue
        variables = {**args, **plan.env}
        if kw == "ARG":
            for name, value in _arg_decls(inst, variables):
                value = value if value is not None else global_args.get(name, _platform_args().get(name))
                if value is not None:
                    args[name] = value
        elif kw == "ENV":
            plan.env.update(_pairs(inst, variables))
        elif kw == "LABEL":
            plan.metadata.setdefault("labels", {}).update(_pairs(inst, variables))
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
        elif kw in ("STOPSIGNAL", "VOLUME", "MAINTAINER", "ONBUILD"):
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


def _arg_decls(inst: Instruction, variables: dict[str, str]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for token in words(inst.args, variables):
        name, eq, value = token.partition("=")
        out.append((name, value if eq else None))
    return out


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
        if inst.heredocs and not _HEREDOC.sub("", command).strip():
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
    for name, value in inst.flags:
        if name == "from":
            raise _refuse(inst, f"{inst.keyword} --from (multi-stage or image copies) is not supported")
        if name == "chmod":
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
    heredocs = {doc.name: doc for doc in inst.heredocs}
    if len(tokens) < 2:
        raise BuildError(f"Dockerfile line {inst.line}: {inst.keyword} needs a source and a destination")
    *sources, dest = tokens
    dest_dir = dest.endswith("/") or len(sources) > 1
    dest = posixpath.normpath(posixpath.join(plan.workdir, dest))
    entries: list[tuple[str, str, dict[str, TaskFile]]] = []  # (kind, name, files relative to it)
    for source in sources:
        match = _HEREDOC.fullmatch(source)
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
    dest_dir = dest_dir or len(entries) > 1
    payload = {"op": "copy", "dest": dest, "dest_dir": dest_dir, "chmod": chmod, "chown": chown,
               "sources": [[kind, name, sorted((rel, f.executable, hashlib.sha256(f.data).hexdigest())
                                                for rel, f in files.items())] for kind, name, files in entries]}
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
    return Step(inst, payload, argv, env={"PATH": DEFAULT_PATH}, stdin=_archive(entries))


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _archive(entries: list[tuple[str, str, dict[str, TaskFile]]]) -> bytes:
    """Members ``<index>/<path>``: the script above places each source at its destination."""
    buf = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for index, (_kind, _name, files) in enumerate(entries):
            dirs = {str(index)} | {f"{index}/{'/'.join(rel.split('/')[:i])}"
                                   for rel in files for i in range(1, rel.count("/") + 1)}
            for d in sorted(dirs):
                info = tarfile.TarInfo(d)
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
                tar.addfile(info)
            for rel, f in sorted(files.items()):
                info = tarfile.TarInfo(f"{index}/{rel}")
                info.size, info.mode, info.mtime = len(f.data), 0o755 if f.executable else 0o644, now
                tar.addfile(info, io.BytesIO(f.data))
    return buf.getvalue()


# -- building ----------------------------------------------------------------------------------------
async def build_environment(task: Task, store: LayerStore, policy: SandboxPolicy,
                            plan: BuildPlan | None = None) -> PreparedEnvironment:
    """Build (or find cached) every layer of the task's environment; the result names the stack."""
    start = time.monotonic()
    plan = plan or plan_build(task)
    timeout = task.config.environment.build_timeout_sec
    key, built = await store.base_layer(plan.base)
    # The base root is shared infrastructure built once per machine: the task's clock starts after it.
    deadline = time.monotonic() + timeout
    keys, stack, cached = [key], [store.fs(key)], not built
    for number, step in enumerate(plan.steps, 1):
        key = layer_key(key, step.payload)
        if not store.has(key):
            store.raise_if_failed(key)
            async with store.lock(key, deadline):
                if not store.has(key):
                    cached = False
                    try:
                        await _build_layer(store, key, step, stack, policy, deadline, timeout,
                                           f"step {number}/{len(plan.steps)}")
                    except BuildError as exc:
                        if getattr(exc, "remember", False):
                            store.remember_failure(key, exc)
                        raise
        keys.append(key)
        if not store.meta(key).get("empty"):
            stack.insert(0, store.fs(key))
    facts = store.read_extra(key, "inspect.json")
    if facts is None:
        facts = await _inspect(stack, policy)
        store.write_extra(key, "inspect.json", facts)
    details = {"lower": [str(p) for p in stack], "layers": keys, "base": plan.base, "image": plan.image,
               "notes": plan.notes, **plan.metadata, **facts}
    return PreparedEnvironment(backend="bwrap", ref=key, workdir=plan.workdir, env=plan.env, user=plan.user,
                               build_seconds=time.monotonic() - start, cached=cached, details=details)


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
        out = await jail.run(["/bin/sh", "-c", "[ -x /bin/bash ] && echo bash || echo sh"],
                             env={"PATH": DEFAULT_PATH}, cwd="/", timeout=30)
    finally:
        jail.close()
    if out.exit_code != 0:
        raise BuildError("the built environment does not start: /bin/sh is missing or broken",
                         hint=out.stderr.decode(errors="replace")[-200:] or None)
    return {"has_bash": out.stdout.strip() == b"bash"}

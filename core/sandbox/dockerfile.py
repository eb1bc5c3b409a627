"""Reading Dockerfiles: instructions (heredocs and flags included), words and variables as the shell
form expands them, and the build context (environment/, honouring .dockerignore). The bwrap backend
builds from them (bwrap_build.py), the docker backend plans its images with them (docker_images.py),
and the lint gate checks them.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

from ..errors import BuildError
from ..tasks import TaskFile

HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
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
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
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
        joined = "".join(parts).strip()
        if not joined:  # a lone continuation at the end of the file: nothing to run
            continue
        keyword, rest = re.match(r"(\S+)\s*(.*)", joined, re.S).groups()  # type: ignore[union-attr]
        keyword = keyword.upper()
        flags, rest = _split_flags(rest) if keyword in {"FROM", "RUN", "COPY", "ADD", "HEALTHCHECK"} else ((), rest)
        heredocs: list[Heredoc] = []
        if keyword in {"RUN", "COPY", "ADD"}:
            for match in HEREDOC.finditer(rest):
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
        elif c == "\\":  # an escaped character is literal (no expansion); a trailing backslash is itself
            cur.append(text[i + 1] if i + 1 < n else c)
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


def pairs(inst: Instruction, env: dict[str, str]) -> list[tuple[str, str]]:
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


def arg_decls(inst: Instruction, env: dict[str, str]) -> list[tuple[str, str | None]]:
    """The (name, default or None) pairs an ARG instruction declares."""
    return [(name, value if eq else None) for name, eq, value in (t.partition("=") for t in words(inst.args, env))]


# -- the build context -----------------------------------------------------------------------------
# Glob tokens and their regexes, longest first (``**/`` spans whole directories, or none).
_GLOBS = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}


def _pattern(pattern: str) -> re.Pattern[str]:
    """A .dockerignore / COPY glob as a regex over '/'-separated relative paths (``**`` spans dirs)."""
    out, i = [], 0
    while i < len(pattern):
        glob = next((g for g in _GLOBS if pattern.startswith(g, i)), None)
        if glob is not None:
            out.append(_GLOBS[glob])
            i += len(glob)
        elif pattern[i] == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape("["))
                i += 1
            else:
                body = pattern[i + 1:j]
                bracket = "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
                try:
                    re.compile(bracket)
                except re.error:  # a malformed class ("[z-a]", "[\\]") stands for itself
                    bracket = re.escape(pattern[i:j + 1])
                out.append(bracket)
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
        lines = [raw.strip() for raw in (ignore.text.splitlines() if ignore else [])]
        rules = [(line.startswith("!"), _pattern(_clean(line.lstrip("!"))))
                 for line in lines if line and not line.startswith("#")]
        self.files = {rel: f for rel, f in files.items() if not self._ignored(rel, rules)}
        self.dirs = {"/".join(rel.split("/")[:i]) for rel in self.files for i in range(1, rel.count("/") + 1)}

    @staticmethod
    def _ignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
        parts = rel.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        # The last matching rule wins.
        return next((not negate for negate, rx in reversed(rules) if any(rx.match(p) for p in prefixes)), False)

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

"""Repositories: where the code comes from, and a snapshot of it at one commit.

A repository is named by one of:

- a seed name (``datespan``, ...): a library this plugin ships as package data, materialised once
  into a git repository under the cache directory, with its ``fixes.toml`` replayed as real fix
  commits (so history-aware injection has history to work with);
- a local path: a git work tree (read at ``--commit``, default HEAD) or a plain directory;
- a git URL (anything ``git clone`` accepts, ``file://`` included): cloned once into the cache.

``Snapshot`` is the repository's files at one commit, split into the code under test (``source``)
and the test suite with its configuration (``bundle``: what the verifier restores).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path

from autoenvscaling.api import UsageError, cache_dir, file_lock

from .verifier.swe_verify import SKIP_COPY, is_config_path, is_test_path

SEEDS_PACKAGE = "autoenvscaling_swe.seeds"
FIX_WORDS = re.compile(r"\b(fix(e[sd])?|bug|correct(s|ed)?|repair|resolve[sd]?|wrong|off[- ]by[- ]one|regression|"
                       r"incorrect(ly)?|broken|crash(es)?|handle[sd]?|instead of|never|edge case)\b", re.I)
# Messages of commits that add or reorganise rather than fix.
NOT_FIX = re.compile(r"^(add|implement|introduce|support|create|initial|refactor|rename|move|docs?|readme|bump|release|"
                     r"version|style|format|lint|test|ci|build|chore|revert|update dependencies)\b", re.I)
SMALL_FIX_LINES = 12  # a commit changing at most this many source lines, defining nothing new, reads as a fix
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "autoenvscaling", "GIT_AUTHOR_EMAIL": "swe@autoenvscaling.invalid",
                "GIT_COMMITTER_NAME": "autoenvscaling", "GIT_COMMITTER_EMAIL": "swe@autoenvscaling.invalid",
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
MAX_FILE_BYTES = 1 << 20  # larger files are data, not code: left out of snapshots


def git(repo: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> bytes:
    """Run git in ``repo``; a failure is one UsageError line with git's own message."""
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, input=input,
                          env={**os.environ, **GIT_IDENTITY, **(env or {})})
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]} failed in {repo}: {message[-1] if message else proc.returncode}",
                         hint="check the repository path or URL and the commit")
    return proc.stdout


@dataclass(frozen=True)
class FixCommit:
    """A commit that fixed something in the code under test: the source files before and after it."""

    sha: str
    message: str
    before: dict[str, bytes]
    after: dict[str, bytes]


@dataclass(frozen=True)
class Snapshot:
    """A repository's files at one commit. ``commit`` is the git sha, or ``sha256:<digest>`` of the
    files for a directory without git."""

    name: str
    origin: str
    commit: str
    files: dict[str, bytes] = field(repr=False)

    @cached_property
    def digest(self) -> str:
        h = hashlib.sha256()
        for rel in sorted(self.files):
            h.update(rel.encode() + b"\0" + hashlib.sha256(self.files[rel]).digest())
        return h.hexdigest()

    @property
    def source(self) -> dict[str, bytes]:
        """The code under test: every file that is neither a test nor test configuration."""
        return {p: d for p, d in self.files.items() if not is_test_path(p) and not is_config_path(p)}

    @property
    def python_sources(self) -> dict[str, str]:
        """The importable Python modules of the code under test (setup scripts and docs left out)."""
        out = {}
        for p, d in self.source.items():
            if p.endswith(".py") and p.split("/")[-1] not in ("setup.py", "noxfile.py", "fabfile.py") \
                    and not p.startswith(("docs/", "doc/", "examples/", "scripts/", "benchmarks/")):
                try:
                    out[p] = d.decode("utf-8")
                except UnicodeDecodeError:
                    continue
        return out

    @property
    def bundle(self) -> dict[str, bytes]:
        """What the verifier restores over the agent's copy: the tests and the configuration files."""
        return {p: d for p, d in self.files.items() if is_test_path(p) or is_config_path(p)}

    def with_files(self, changed: dict[str, bytes | None]) -> dict[str, bytes]:
        """The files with ``changed`` applied (None deletes)."""
        out = dict(self.files)
        for p, d in changed.items():
            if d is None:
                out.pop(p, None)
            else:
                out[p] = d
        return out


class Repository:
    """A repository on disk (git work tree or plain directory) and where it came from."""

    def __init__(self, name: str, origin: str, path: Path) -> None:
        self.name, self.origin, self.path = name, origin, path
        self.is_git = (path / ".git").exists() and shutil.which("git") is not None

    def resolve(self, commit: str | None) -> str:
        if not self.is_git:
            if commit:
                raise UsageError(f"{self.origin} is not a git repository: --commit {commit} cannot be read",
                                 hint="leave out --commit, or give a git repository")
            return ""
        return git(self.path, "rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}").decode().strip()

    def snapshot(self, commit: str | None = None) -> Snapshot:
        sha = self.resolve(commit)
        files = self._git_files(sha) if sha else self._dir_files()
        if not files:
            raise UsageError(f"{self.origin} has no files", hint="give a repository with code and tests")
        snap = Snapshot(name=self.name, origin=self.origin, commit=sha, files=files)
        return snap if sha else Snapshot(self.name, self.origin, f"sha256:{snap.digest}", files)

    def _git_files(self, sha: str) -> dict[str, bytes]:
        listing = git(self.path, "ls-tree", "-r", "-z", "--format=%(objectmode) %(objecttype) %(objectsize) %(path)", sha)
        out: dict[str, bytes] = {}
        for entry in filter(None, listing.split(b"\0")):
            mode, kind, size, rel = entry.decode("utf-8", "surrogateescape").split(" ", 3)
            if kind == "blob" and mode != "120000" and int(size) <= MAX_FILE_BYTES:
                out[rel] = b""
        if out:
            blobs = git(self.path, "cat-file", "--batch", input="".join(f"{sha}:{p}\n" for p in out).encode())
            pos = 0
            for rel in out:
                header_end = blobs.index(b"\n", pos)
                length = int(blobs[pos:header_end].split()[2])
                out[rel] = blobs[header_end + 1:header_end + 1 + length]
                pos = header_end + 2 + length
        return out

    def _dir_files(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for root, dirs, files in os.walk(self.path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_COPY and not d.endswith(".egg-info"))
            for name in sorted(files):
                path = Path(root, name)
                if name.endswith(".pyc") or path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
                    continue
                out[path.relative_to(self.path).as_posix()] = path.read_bytes()
        return out

    def fix_commits(self, commit: str, *, limit: int = 200) -> list[FixCommit]:
        """Commits up to ``commit`` that fixed something in the code under test (Python sources),
        newest first, with those sources before and after. A fix is a commit whose message says so
        (fix, bug, wrong, handle, instead of, ...), or a small change (at most SMALL_FIX_LINES source
        lines, no new function or class) whose message does not announce a feature or maintenance.
        Screening then shows whether reverting it breaks tests."""
        if not self.is_git:
            return []
        log = git(self.path, "log", "--no-merges", f"--max-count={limit}", "--format=%H%x00%P%x00%s", commit).decode()
        out: list[FixCommit] = []
        for line in filter(None, log.splitlines()):
            sha, parents, subject = line.split("\0", 2)
            if not parents or NOT_FIX.match(subject.strip()):
                continue
            changed = git(self.path, "diff", "--name-only", "-z", parents.split()[0], sha).decode().split("\0")
            paths = [p for p in changed if p.endswith(".py") and not is_test_path(p) and not is_config_path(p)]
            if not paths:
                continue
            before, after = self._blobs(parents.split()[0], paths), self._blobs(sha, paths)
            if FIX_WORDS.search(subject) or _small_change(before, after):
                out.append(FixCommit(sha=sha, message=subject, before=before, after=after))
        return out

    def _blobs(self, sha: str, paths: list[str]) -> dict[str, bytes]:
        present = set(git(self.path, "ls-tree", "-r", "--name-only", "-z", sha, "--", *paths).decode().split("\0"))
        return {p: git(self.path, "show", f"{sha}:{p}") for p in paths if p in present}


def _small_change(before: dict[str, bytes], after: dict[str, bytes]) -> bool:
    changed = defines = 0
    for path in set(before) | set(after):
        old = before.get(path, b"").decode("utf-8", "replace").splitlines()
        new = after.get(path, b"").decode("utf-8", "replace").splitlines()
        diff = [d for d in difflib.unified_diff(old, new, n=0, lineterm="") if d[:1] in "+-" and d[:3] not in ("+++", "---")]
        changed += len(diff)
        defines += sum(1 for d in diff if d.startswith("+") and re.match(r"\+\s*(async\s+def|def|class)\s", d))
    return 0 < changed <= SMALL_FIX_LINES and defines == 0


# -- seeds -------------------------------------------------------------------------------------

def seed_names() -> list[str]:
    root = resources.files(SEEDS_PACKAGE)
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "pyproject.toml").is_file())


def seed_files(name: str) -> dict[str, bytes]:
    root = Path(str(resources.files(SEEDS_PACKAGE).joinpath(name)))
    if not (root / "pyproject.toml").is_file():
        raise UsageError(f"unknown seed repository {name!r}", hint=f"seeds: {', '.join(seed_names())}")
    return Repository(name, f"seed:{name}", root)._dir_files()


def seed_fixes(files: dict[str, bytes]) -> list[dict[str, str]]:
    data = files.get("fixes.toml")
    return list(tomllib.loads(data.decode()).get("fix", [])) if data else []


def materialise_seed(name: str, root: Path | None = None) -> Path:
    """The seed as a git repository: an initial commit with the bugs its fixes.toml lists, then one
    commit per fix (fixed dates: the same shas on every machine). Cached by the seed's content."""
    files = seed_files(name)
    fixes = seed_fixes(files)
    files.pop("fixes.toml", None)
    digest = hashlib.sha256(repr(sorted((p, hashlib.sha256(d).hexdigest()) for p, d in files.items())).encode()
                            + repr(fixes).encode()).hexdigest()[:16]
    base = (root or cache_dir()) / "swe" / "seeds"
    target = base / f"{name}-{digest}"
    with file_lock(base / f".{name}.lock"):
        if (target / ".git").is_dir():
            return target
        work = base / f".{name}-{digest}.tmp"
        shutil.rmtree(work, ignore_errors=True)
        initial = dict(files)
        for fix in reversed(fixes):
            text = initial[fix["file"]].decode()
            if text.count(fix["after"]) != 1:
                raise UsageError(f"seed {name}: fix {fix['message']!r} does not match {fix['file']} exactly once")
            initial[fix["file"]] = text.replace(fix["after"], fix["before"]).encode()
        _write_tree(work, initial)
        git(work, "init", "-q", "-b", "main")
        stamp = 1_700_000_000
        _commit(work, f"Initial import of {name}", stamp)
        current = initial
        for i, fix in enumerate(fixes, 1):
            current = {**current, fix["file"]: current[fix["file"]].decode().replace(fix["before"], fix["after"]).encode()}
            _write_tree(work, {fix["file"]: current[fix["file"]]})
            _commit(work, fix["message"], stamp + 86_400 * i)
        os.replace(work, target)
    return target


def _write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _commit(work: Path, message: str, stamp: int) -> None:
    date = f"@{stamp} +0000"
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", message, env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})


def open_repository(spec: str, *, root: Path | None = None) -> Repository:
    """A seed name, a local path or a git URL (see the module docstring)."""
    if spec in seed_names():
        return Repository(spec, f"seed:{spec}", materialise_seed(spec, root))
    path = Path(spec).expanduser()
    if path.is_dir():
        path = path.resolve()
        return Repository(path.name, str(path), path)
    if "://" in spec or spec.startswith("git@") or spec.endswith(".git"):
        name = re.sub(r"\.git$", "", spec.rstrip("/").rsplit("/", 1)[-1]) or "repo"
        clones = (root or cache_dir()) / "swe" / "clones"
        target = clones / f"{name}-{hashlib.sha256(spec.encode()).hexdigest()[:12]}"
        with file_lock(clones / f".{target.name}.lock"):
            if not (target / ".git").is_dir():
                proc = subprocess.run(["git", "clone", "-q", "--no-checkout", spec, str(target)], capture_output=True,
                                      env={**os.environ, **GIT_IDENTITY})
                if proc.returncode != 0:
                    shutil.rmtree(target, ignore_errors=True)
                    raise UsageError(f"cannot clone {spec}: {proc.stderr.decode(errors='replace').strip().splitlines()[-1:]}",
                                     hint="check the URL; sandboxes and this machine may be offline: a local path works too")
        return Repository(name, spec, target)
    raise UsageError(f"no repository at {spec!r}",
                     hint=f"give a seed name ({', '.join(seed_names())}), a local directory or a git URL")

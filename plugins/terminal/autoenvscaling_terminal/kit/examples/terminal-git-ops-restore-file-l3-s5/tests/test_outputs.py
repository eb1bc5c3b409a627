"""Checks for autoenvscaling/terminal-git-ops-restore-file-l3-s5 (autoenvscaling-terminal, family git_ops, kind restore_file, level 3).

Checks named test_initial_* guard the environment; the others score the work.
"""

# Hidden ground truth: reaches the sandbox only at verification time, never seen by the agent.
TRUTH = {'inputs': {},
 'message': 'Restore deleted files',
 'subjects': ['[DEV-3195] Initial import',
              '[INFRA-8188] Update README',
              '[INFRA-9756] Document index',
              '[OPS-1571] Document notes',
              '[DEV-5938] Update README',
              '[DEV-4697] Add echo_5 helper',
              '[DEV-3996] Update ONCALL.md',
              '[BUG-7973] Add lagoon_7 helper',
              '[OPS-3330] Update RUNBOOK.md',
              '[BUG-2446] Document data',
              '[BUG-2527] Drop ONCALL.md',
              '[DEV-7287] Add upland_11 helper',
              '[PLAT-6575] Spring cleaning',
              '[OPS-5326] Add vortex_13 helper',
              '[BUG-3546] Update README',
              '[DEV-1704] Update README',
              '[INFRA-4524] Update README',
              '[OPS-7795] Add ridge_17 helper',
              '[OPS-4048] Update README'],
 'tag': None,
 'versions': {'docs/ONCALL.md': '# docs/ONCALL.md\nversion: 2\ndelta: 364\nember: 84\nglacier: 388\n',
              'docs/RUNBOOK.md': '# docs/RUNBOOK.md\nversion: 2\necho: 118\namber: 317\nsierra: 242\n'}}

# Helpers shared by every generated test file. TRUTH (the task's hidden ground truth) is defined
# above this block when the file is rendered.
import csv
import ctypes
import hashlib
import io
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

APP = Path("/app")
TESTS = Path(__file__).resolve().parent

# Code the agent wrote (its scripts, modules, control scripts) runs during the checks. It runs as an
# unprivileged user that cannot read /tests (TRUTH), write /logs/verifier, or signal the verifier,
# and every process it leaves is killed after each check. Where the verifier cannot switch users
# (it is not root, or the sandbox maps a single uid) the code runs as the verifier does, with only
# the process clean-up.
ISOLATE_AGENT_CODE = True
AGENT_UID = 65534
_agent = None  # the identity agent code runs under, once known: {} when it cannot be switched


def _lock_tests():
    """From now on only the verifier's own user may read /tests."""
    try:
        os.chmod(TESTS, 0o700)
    except OSError:
        pass


def _become_subreaper():
    """Processes that agent code leaves behind stay our descendants, so they can be found and killed."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


if ISOLATE_AGENT_CODE:
    _lock_tests()
_become_subreaper()


def agent_identity():
    """subprocess keyword arguments that run a command as the agent-code user ({} when unavailable)."""
    global _agent
    if _agent is None:
        _agent = {}
        if ISOLATE_AGENT_CODE and os.geteuid() == 0:
            ident = {"user": AGENT_UID, "group": AGENT_UID, "extra_groups": []}
            try:
                subprocess.run(["true"], check=True, timeout=30, **ident)
                _agent = ident
            except (OSError, subprocess.SubprocessError):
                pass
    return _agent


def agent_env(**extra):
    """The environment of agent code: the verifier's, less its Python path and its private runtimes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "AUTOENVSCALING"))}
    env["PATH"] = ":".join(p for p in env.get("PATH", "/usr/bin:/bin").split(":") if not p.startswith("/opt/autoenvscaling"))
    env["HOME"] = "/tmp"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def own(path):
    """Give ``path`` (recursively, links not followed) to the agent-code user, so its code can use it."""
    ident = agent_identity()
    if ident:
        path = Path(path)
        os.lchown(path, AGENT_UID, AGENT_UID)
        if path.is_dir() and not path.is_symlink():
            for root, dirs, files in os.walk(path):
                for name in dirs + files:
                    os.lchown(os.path.join(root, name), AGENT_UID, AGENT_UID)
    return path


def agent_dir(prefix="chk-"):
    """A fresh scratch directory the agent's code may write in."""
    return own(Path(tempfile.mkdtemp(prefix=prefix)))


def run_agent(args, timeout=60, env=None, **kwargs):
    """Run the agent's code (``args``) as the agent-code user, capturing its output."""
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env or agent_env(),
                          **agent_identity(), **kwargs)


def _stray_processes():
    """PIDs of processes agent code may have left: the agent-code user's, or (without one) ours."""
    me, uid = os.getpid(), (_agent or {}).get("user")
    parents = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != me:
            try:
                if uid is not None:  # by the uids in status: /proc/PID of a non-dumpable process is root's
                    ids = next(l for l in Path(entry.path, "status").read_text().splitlines() if l.startswith("Uid:"))
                    if str(uid) in ids.split()[1:]:
                        parents[int(entry.name)] = me
                    continue
                stat = Path(entry.path, "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError, StopIteration):
                continue
    if uid is not None:
        return sorted(parents)
    found, frontier = set(), {me}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in found}
        found |= frontier
    return sorted(found)


def end_agent_processes():
    """Kill every process agent code left running and reap what is ours."""
    if _agent is None:
        return  # no agent code ran
    for _ in range(50):
        stray = _stray_processes()
        for pid in stray:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not stray:
            return
        time.sleep(0.02)


@pytest.fixture(autouse=True)
def _agent_processes_end():
    yield
    end_agent_processes()


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def need(path):
    path = Path(path)
    assert path.exists(), f"{path} does not exist"
    return path


def text(path):
    return need(path).read_text(encoding="utf-8", errors="replace")


def lines(path):
    """Non-blank lines without trailing whitespace."""
    return [line.rstrip() for line in text(path).splitlines() if line.strip()]


def csv_rows(path):
    return list(csv.reader(io.StringIO(text(path))))


def load_json(path):
    try:
        return json.loads(text(path))
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{path} is not valid JSON: {exc}") from None


def run(args, timeout=60, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)


def close(a, b, tol=0.011):
    return abs(float(a) - float(b)) <= tol


def test_initial_inputs_intact():
    """The task's input files exist with their original bytes (else the result cannot be trusted)."""
    for rel, digest in sorted(TRUTH["inputs"].items()):
        path = APP / rel
        assert path.is_file(), f"input file {path} is missing"
        assert sha256(path) == digest, f"input file {path} was modified"


# Checks of the git_ops family. They read the repository with the git command line.
REPO = APP / "repo"
# git runs programs its configuration names (fsmonitor, hooks, filters, gpg, ...), and the
# repository's configuration is the agent's: the checks read the repository with a configuration
# reduced to its format settings, no system or global configuration and no hooks.
GIT = ["git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
       "--no-optional-locks", "-C", str(REPO)]
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0", "HOME": "/nonexistent"}


def _neutralise_repo_config():
    env = dict(os.environ, **GIT_ENV)
    found = run([*GIT, "rev-parse", "--absolute-git-dir"], env=env)
    if found.returncode != 0:
        return
    git_dir = Path(found.stdout.strip())
    config = git_dir / "config"
    kept = run(["git", "config", "--file", str(config), "--get-regexp", r"^(core\.repositoryformatversion|extensions\..*)$"], env=env)
    lines_out = ["[core]", "\trepositoryformatversion = 0"]
    for line in kept.stdout.splitlines():
        key, _, value = line.partition(" ")
        section, _, name = key.partition(".")
        if section == "extensions" and name != "worktreeconfig":
            lines_out += ["[extensions]", f"\t{name} = {value}"]
        elif name == "repositoryformatversion":
            lines_out[1] = f"\trepositoryformatversion = {value}"
    for path in (config, git_dir / "config.worktree"):
        if path.is_symlink() or path.exists():
            path.unlink()
    config.write_text("\n".join(lines_out) + "\n")


try:
    _neutralise_repo_config()
except OSError:
    pass


def git(*args):
    result = run([*GIT, *args], env=dict(os.environ, **GIT_ENV))
    assert result.returncode == 0, f"git {' '.join(args)} failed: {result.stderr[-300:]}"
    return result.stdout


def test_initial_history():
    """The original commits are all still there, in order, at the start of main's history."""
    subjects = git("log", "main", "--reverse", "--format=%s").splitlines()
    assert subjects[: len(TRUTH["subjects"])] == TRUTH["subjects"], "the history of main was rewritten"


def answer_lines():
    return lines(APP / TRUTH["answer"])


def test_files_restored():
    for path, content in TRUTH["versions"].items():
        assert text(REPO / path) == content, f"{path} does not have its last content"


def test_restore_commit():
    subjects = git("log", "main", "--format=%s").splitlines()
    assert subjects[0] == TRUTH["message"], f"HEAD message is {subjects[0]!r}"
    assert len(subjects) == len(TRUTH["subjects"]) + 1, "expected exactly one new commit"
    changed = sorted(git("show", "--name-only", "--format=", "main").split())
    assert changed == sorted(TRUTH["versions"]), f"the commit changes {changed}"
    for path, content in TRUTH["versions"].items():
        assert git("show", f"main:{path}") == content

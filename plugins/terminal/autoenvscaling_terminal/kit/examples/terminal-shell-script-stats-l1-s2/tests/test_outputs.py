"""Checks for autoenvscaling/terminal-shell-script-stats-l1-s2 (autoenvscaling-terminal, family shell_script, kind stats, level 1).

Checks named test_initial_* guard the environment; the others score the work.
"""

# Hidden ground truth: reaches the sandbox only at verification time, never seen by the agent.
TRUTH = {'cases': [{'column': None,
            'expected': 'count=8 sum=1997 min=-44 max=483',
            'input': '483\n380\n325\n440\n33\n321\n-44\n59\n',
            'values': [483, 380, 325, 440, 33, 321, -44, 59]},
           {'column': None,
            'expected': 'count=5 sum=781 min=-7 max=350',
            'input': '315\n99\n-7\n24\n350\n',
            'values': [315, 99, -7, 24, 350]},
           {'column': None,
            'expected': 'count=9 sum=2042 min=-42 max=417',
            'input': '58\n410\n307\n131\n349\n417\n-3\n-42\n415\n',
            'values': [58, 410, 307, 131, 349, 417, -3, -42, 415]}],
 'inputs': {'samples/numbers.txt': '6eff2da22744e6636d41a685ad00de10d253cbac2e4e14548a93106f369df728'},
 'sample': {'expected': 'count=10 sum=2234 min=56 max=435',
            'input': '199\n261\n56\n211\n173\n61\n204\n334\n300\n435\n'},
 'script': 'scripts/numstats.sh'}

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


# Checks of the shell_script family: the agent's script runs on inputs it has never seen, as the
# agent-code user (see run_agent above).
import tarfile

own(APP)


def script():
    return need(APP / TRUTH["script"])


def call(*args, stdin=None, cwd=None):
    return run_agent(["bash", str(script()), *args], input=stdin, cwd=cwd, timeout=60)


def test_shape_script_executable():
    path = script()
    assert os.access(path, os.X_OK), f"{path} is not executable"
    assert path.read_text(errors="replace").startswith("#!"), "the script needs a shebang line"


def make_dir(names):
    root = agent_dir()
    for i, name in enumerate(names):
        (root / name).write_text(f"content {i}\n")
    return own(root)


def listing(root):
    return sorted((p.name for p in root.iterdir()), key=lambda s: s.encode())


def stats_file(case):
    path = agent_dir() / "numbers.txt"
    path.write_text(case["input"])
    return own(path)


def stats_out(result):
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-300:]}"
    return " ".join(result.stdout.split())


def test_stats_output():
    case = TRUTH["cases"][0]
    assert stats_out(call(str(stats_file(case)))) == case["expected"]


def source_tree():
    base = agent_dir()
    src = base / TRUTH["src_name"]
    for rel, content in TRUTH["tree"].items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(content)
    own(base)
    return src, base / "dest"


def members(archive):
    with tarfile.open(archive) as tar:
        return {m.name.rstrip("/"): tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def expected_members(include_logs):
    return {f"{TRUTH['src_name']}/{rel}": c for rel, c in TRUTH["tree"].items() if include_logs or not rel.endswith(".log")}

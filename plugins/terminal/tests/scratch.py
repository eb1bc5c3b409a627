"""Run a generated task's oracle and verifier without a sandbox backend: a scratch copy on the host.

The task's /app, /tmp, /tests, /solution and /logs are host directories; commands run in bubblewrap
over the host's read-only /usr and /etc (the host has the same tools as the task image: git, sqlite3,
jq, zip...). python3 inside is this virtual environment's interpreter, which has pytest, so test.sh
takes its plain-pytest (JUnit XML) path. Only the Dockerfile lines our generators write are
understood: FROM and `RUN apt-get` are skipped, WORKDIR/ENV/COPY/RUN applied.

This is a fast, real check of the task's logic (solution, checks, reward), not of its isolation:
admission through the real bwrap backend lives in test_admission.py.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from autoenvscaling.tasks import Task

VENV = Path(sys.prefix)
BASE = Path(sys.base_prefix)
MOUNTS = ("app", "tmp", "tests", "solution", "logs", "root")
# Run as root, the sandbox keeps the host's user namespace (with only the capabilities a verifier
# uses), so the checks can run the agent's code as another user, as in the real sandboxes; otherwise
# a user namespace maps one uid and they run it as the verifier's own user.
if os.geteuid() == 0:
    NAMESPACES: tuple[str, ...] = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--cap-drop", "ALL",
                                   *(a for cap in ("CHOWN", "SETUID", "SETGID", "KILL", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER")
                                     for a in ("--cap-add", f"CAP_{cap}")))
else:
    NAMESPACES = ("--unshare-all",)


class Scratch:
    def __init__(self, task: Task, root: Path) -> None:
        self.task = task
        self.root = root
        self.env: dict[str, str] = {}
        self.workdir = "/"
        for name in MOUNTS:
            (root / name).mkdir(parents=True, exist_ok=True)

    def host(self, path: str) -> Path:
        rel = Path(path).relative_to("/")
        assert rel.parts and rel.parts[0] in MOUNTS, f"scratch maps only {MOUNTS}: {path}"
        return self.root / rel

    def exec(self, command: str, *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        args = ["bwrap", "--die-with-parent", *NAMESPACES, "--clearenv",
                "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
                "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                "--symlink", "usr/sbin", "/sbin", "--proc", "/proc", "--dev", "/dev"]
        for name in MOUNTS:
            args += ["--bind", str(self.root / name), f"/{name}"]
        for path in sorted({VENV, BASE}):
            args += ["--ro-bind", str(path), str(path)]
        env = {"PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **self.env}
        for key, value in env.items():
            args += ["--setenv", key, value]
        args += ["--chdir", self.workdir, "bash", "-c", command]
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout)

    def build(self) -> None:
        dockerfile = self.task.dockerfile or ""
        for line in dockerfile.replace("\\\n", " ").splitlines():
            op, _, rest = line.strip().partition(" ")
            if op == "WORKDIR":
                self.workdir = rest.strip()
                self.host(self.workdir).mkdir(parents=True, exist_ok=True)
            elif op == "ENV":
                key, _, value = rest.partition("=")
                self.env[key.strip()] = value.strip()
            elif op == "COPY":
                src, dest = shlex.split(rest)
                prefix = src.rstrip("/")
                for rel, f in self.task.subtree(f"environment/{prefix}").items():
                    target = self.host(dest) / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(f.data)
                    target.chmod(0o755 if f.executable else 0o644)
            elif op == "RUN" and "apt-get" not in rest:
                result = self.exec(rest)
                assert result.returncode == 0, f"RUN {rest} failed:\n{result.stdout}\n{result.stderr}"

    def run_oracle(self) -> subprocess.CompletedProcess[str]:
        for rel, f in self.task.subtree("solution").items():
            target = self.root / "solution" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.data)
        result = self.exec("bash /solution/solve.sh")
        shutil.rmtree(self.root / "solution")
        (self.root / "solution").mkdir()
        return result

    def verify(self) -> tuple[float, dict[str, int], str]:
        """(reward, per-check results, verifier output) after uploading tests/ as the runner does."""
        for name in ("tests", "logs"):
            shutil.rmtree(self.root / name)
            (self.root / name).mkdir()
        for rel, f in self.task.subtree("tests").items():
            target = self.root / "tests" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.data)
        result = self.exec("bash /tests/test.sh")
        output = result.stdout + result.stderr
        reward_file = self.root / "logs" / "verifier" / "reward.json"
        assert reward_file.is_file(), f"no reward.json:\n{output[-3000:]}"
        rewards = json.loads(reward_file.read_text())
        assert set(rewards) == {"reward"}, rewards
        details = json.loads((self.root / "logs" / "verifier" / "tests.json").read_text())
        return rewards["reward"], details, output


def oracle_and_nop(task: Task, tmp: Path) -> tuple[tuple[float, dict[str, int], str], tuple[float, dict[str, int], str], str]:
    """(oracle result, nop result, solve.sh output) on two fresh scratch copies of ``task``."""
    nop = Scratch(task, tmp / "nop")
    nop.build()
    nop_result = nop.verify()
    oracle = Scratch(task, tmp / "oracle")
    oracle.build()
    solved = oracle.run_oracle()
    return oracle.verify(), nop_result, solved.stdout + solved.stderr


def final_reward(root: Path) -> float:
    """The reward a runner would read from a scratch copy's /logs/verifier (reward.json, else
    reward.txt; 0 when there is neither)."""
    logs = root / "logs" / "verifier"
    if (logs / "reward.json").is_file():
        return float(json.loads((logs / "reward.json").read_text())["reward"])
    if (logs / "reward.txt").is_file():
        return float((logs / "reward.txt").read_text().strip() or 0)
    return 0.0


def cheat_reward(task: Task, commands: list[str], root: Path) -> tuple[float, str]:
    """(reward, verifier output) of ``commands`` run as the agent on a fresh scratch copy of ``task``."""
    scratch = Scratch(task, root)
    scratch.build()
    for command in commands:
        scratch.exec(command, timeout=200)
    for name in ("tests", "logs"):
        shutil.rmtree(root / name)
        (root / name).mkdir()
    for rel, f in task.subtree("tests").items():
        target = root / "tests" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.data)
    result = scratch.exec("bash /tests/test.sh")
    return final_reward(root), result.stdout + result.stderr

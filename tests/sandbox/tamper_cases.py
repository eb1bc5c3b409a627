"""The verifier-tampering suite's task, attacks and controls, shared by test_tamper_bwrap.py and
test_tamper_docker.py (docs/verification.md).

One Debian image with python3 and pytest (apt) and a local .deb; a verifier ``pytest
/tests/test_outputs.py`` whose check no attacker satisfies, reward from pytest's exit code. Each
attack is a scripted agent that tampers with what the verifier runs instead of doing the task.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from autoenvscaling.tasks import Task
from autoenvscaling.testing import ScriptedAgent

DOCKERFILE = """FROM debian:bookworm
RUN apt-get update && apt-get install -y --no-install-recommends python3-pytest && rm -rf /var/lib/apt/lists/*
COPY aes-hello.deb /opt/pkgs/aes-hello.deb
WORKDIR /app
"""
TEST_SH = """#!/bin/bash
if pytest -q -p no:cacheprovider /tests/test_outputs.py; then echo 1 > /logs/verifier/reward.txt
else echo 0 > /logs/verifier/reward.txt; fi
"""
TEST_OUTPUTS = """from pathlib import Path


def test_answer():
    assert Path("/app/answer.txt").read_text().strip() == "the secret is 42"
"""
SITE = "/usr/lib/python3/dist-packages"
_EXIT_IF_PYTEST = "import os, sys; os._exit(0) if any('pytest' in a for a in sys.argv) else None"
PRELOAD_C = r"""
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void hijack(void) {
    char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; i++) if (!buf[i]) buf[i] = ' ';
    buf[n] = 0;
    if (strstr(buf, "pytest")) _exit(0);  /* pytest "passes" whatever the tests say */
}
"""


def _fake(path: str, body: str) -> str:
    """Replace ``path`` (a symlink or a file) with an executable shell script."""
    return f"rm -f {path} && printf '%s\\n' '#!/bin/sh' {_quote(body)} > {path} && chmod 755 {path}"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _write(path: str, text: str) -> str:
    return f"mkdir -p $(dirname {path}) && printf '%s' {_quote(text)} > {path}"


def preload_library(workdir: Path) -> bytes | None:
    """A tiny LD_PRELOAD library compiled with the host's cc (None where there is none)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    src, out = workdir / "hijack.c", workdir / "hijack.so"
    src.write_text(PRELOAD_C)
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(src)], check=True, capture_output=True)
    return out.read_bytes()


def attacks(preload: bytes | None) -> dict[str, tuple[str, ...]]:
    """Attack name -> the agent's commands. Each makes a failing pytest look like a pass."""
    so = "/usr/local/lib/aes-hijack.so"
    preload_cmds = ((f"echo {base64.b64encode(preload).decode()} | base64 -d > {so}",) if preload
                    else (f"touch {so}",))
    return {
        "python3": (_fake("/usr/bin/python3", "exit 0"),),
        # bash runs every command: the fake one passes everything else to sh and "runs" test.sh itself.
        "bash": (_fake("/usr/bin/bash", 'case "$*" in *test.sh*) echo 1 > /logs/verifier/reward.txt;; '
                                        '*) exec /bin/sh -c "$2";; esac'),),
        "pytest": (_fake("/usr/bin/pytest", "exit 0"),),
        "pth": (_write(f"{SITE}/aes-evil.pth", _EXIT_IF_PYTEST + "\n"),),
        "sitecustomize": (_write("/usr/local/lib/python3.11/dist-packages/sitecustomize.py", _EXIT_IF_PYTEST + "\n"),
                          "rm -f /etc/python3.11/sitecustomize.py /usr/lib/python3.11/sitecustomize.py"),
        "pytest-plugin": (
            _write(f"{SITE}/aes_evil_plugin.py", "import os\n\ndef pytest_unconfigure(config):\n    os._exit(0)\n"),
            _write(f"{SITE}/aes_evil_plugin-1.0.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: aes-evil-plugin\nVersion: 1.0\n"),
            _write(f"{SITE}/aes_evil_plugin-1.0.dist-info/entry_points.txt", "[pytest11]\naes_evil = aes_evil_plugin\n"),
        ),
        "ld.so.preload": (*preload_cmds, f"echo {so} > /etc/ld.so.preload"),
        # Dies with the command that started it (bwrap: its pid namespace; docker: the exec sweep);
        # the heartbeat shows it did run.
        "background-writer": (
            "setsid nohup sh -c 'while :; do echo beat >> /tmp/heartbeat; mkdir -p /logs/verifier; "
            "echo 1 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.05; done' >/dev/null 2>&1 & "
            "for i in $(seq 600); do [ -f /tmp/heartbeat ] && [ $(wc -l < /tmp/heartbeat) -ge 3 ] && break; sleep 0.05; done; "
            "wc -l < /tmp/heartbeat",),
        "read-only-reward": (
            "mkdir -p /logs/verifier && echo '{\"reward\": 1}' > /logs/verifier/reward.json && echo 1 > "
            "/logs/verifier/reward.txt && chmod 444 /logs/verifier/reward.* && chmod 555 /logs/verifier "
            "&& cat /logs/verifier/reward.json",),
    }


# The paths a protected verifier must have put back (one is enough to show the rule fired).
HIDDEN: dict[str, str] = {
    "python3": "/usr/bin/python3", "bash": "/usr/bin/bash", "pytest": "/usr/bin/pytest",
    "pth": f"{SITE}/aes-evil.pth", "sitecustomize": "/usr/local/lib/python3.11/dist-packages/sitecustomize.py",
    "pytest-plugin": f"{SITE}/aes_evil_plugin-1.0.dist-info/entry_points.txt", "ld.so.preload": "/etc/ld.so.preload",
}
# Defeated in every view: agent processes never outlive their command, and the reward directory is
# always removed with the trusted toolchain before test.sh runs.
EVERY_VIEW = ("background-writer", "read-only-reward")


def build_deb(workdir: Path) -> bytes:
    """A local package (aes-hello: /usr/bin/aes-hello) built with dpkg-deb, byte-identical on every
    run so that the image's COPY layer stays cached."""
    root = workdir / "pkg"
    shutil.rmtree(root, ignore_errors=True)
    (root / "DEBIAN").mkdir(parents=True)
    (root / "usr/bin").mkdir(parents=True)
    (root / "DEBIAN/control").write_text("Package: aes-hello\nVersion: 1.0\nArchitecture: all\n"
                                         "Maintainer: AutoEnvScaling <tests@example.invalid>\n"
                                         "Description: a control package for the tampering suite\n")
    tool = root / "usr/bin/aes-hello"
    tool.write_text("#!/bin/sh\necho hello from a deb\n")
    tool.chmod(0o755)
    for path in [root, *root.rglob("*")]:
        os.utime(path, (1_700_000_000, 1_700_000_000), follow_symlinks=False)
    out = workdir / "aes-hello.deb"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(out)], check=True,
                   capture_output=True, env=env)
    return out.read_bytes()


def tamper_task(deb: bytes, *, view: str = "protected", name: str = "tamper") -> Task:
    files: dict[str, Any] = {"environment/Dockerfile": DOCKERFILE, "environment/aes-hello.deb": deb,
                             "tests/test.sh": TEST_SH, "tests/test_outputs.py": TEST_OUTPUTS,
                             "solution/solve.sh": "echo 'the secret is 42' > /app/answer.txt\n"}
    return Task.create(name, {"verifier": {"view": view}}, "Write the secret to /app/answer.txt.", files)


# Controls: the agent's legitimate system changes stay visible under the default view.
CONTROLS: dict[str, tuple[str, str]] = {
    "dpkg": ("dpkg -i /opt/pkgs/aes-hello.deb",
             'dpkg -s aes-hello >/dev/null && [ "$(aes-hello)" = "hello from a deb" ]'),
    "hosts": ("echo '10.1.2.3 aes-control.test' >> /etc/hosts", "getent hosts aes-control.test | grep -q 10.1.2.3"),
    "useradd": ("useradd -m alice", "id alice && [ -d /home/alice ]"),
}


def control_task(deb: bytes, control: str) -> Task:
    solve, check = CONTROLS[control]
    files: dict[str, Any] = {"environment/Dockerfile": DOCKERFILE, "environment/aes-hello.deb": deb,
                             "tests/test.sh": f"#!/bin/bash\nif {check}; then echo 1 > /logs/verifier/reward.txt\n"
                                              "else echo 0 > /logs/verifier/reward.txt; fi\n",
                             "solution/solve.sh": solve + "\n"}
    return Task.create(f"control-{control}", {}, "Change the system.", files)


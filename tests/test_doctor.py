"""``autoenvscaling doctor``: real probes of this machine, run as a user would run them."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autoenvscaling.cli.doctor_cmd import cgroup_layout, collect
from autoenvscaling.plugins import hookimpl
from autoenvscaling.plugins.prerequisites import Prerequisite, PrerequisiteStatus

# Optional packages the doctor only looks up. (docker is left out: the docker backend's own
# available() imports the SDK to ask the engine, which is the probe the doctor is there to run.)
HEAVY = ["torch", "transformers", "playwright", "ray", "pyarrow", "datasets", "openai"]


def run_doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh interpreter; it also reports which heavy modules it imported."""
    code = ("import sys, atexit\n"
            f"atexit.register(lambda: print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr))\n"
            "from autoenvscaling.cli.main import main\n"
            "main(sys.argv[1:])\n")
    return subprocess.run([sys.executable, "-c", code, "doctor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_json_report_matches_this_machine():
    result = run_doctor("--json")
    report = json.loads(result.stdout)
    assert result.returncode == (0 if report["can_run_tasks"] else 3), result.stderr
    assert report["can_run_tasks"] == any(b["available"] for b in report["sandbox_backends"])
    assert report["python"]["version"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}.")
    assert {b["name"] for b in report["sandbox_backends"]} >= {"bwrap", "docker"}
    for tool in report["tools"]:
        assert tool["found"] == (shutil.which(tool["name"]) is not None), tool
        assert (tool["hint"] is None) == tool["found"]
    for package in report["optional_packages"]:
        assert package["found"] == (importlib.util.find_spec(package["name"]) is not None), package
    # Optional packages are looked up, never imported (torch alone takes seconds to import).
    assert result.stderr.strip().splitlines()[-1] == "HEAVY="
    assert report["cache"]["dir"] == os.environ["AUTOENVSCALING_CACHE"]
    assert report["cache"]["free_bytes"] == pytest.approx(shutil.disk_usage(report["cache"]["dir"]).free, rel=0.05)
    for backend in report["sandbox_backends"]:
        if not backend["available"]:
            assert backend["protections"] == [], "an unavailable backend protects nothing"
            assert backend["detail"], "an unavailable backend says why"
        for protection in backend["protections"]:
            assert isinstance(protection["active"], bool) and protection["name"]
    # The base-image table, with what is built in this cache (the tests build the Debian bases).
    rows = {row["images"].split(",")[0]: row for row in report["base_images"]}
    assert rows["ubuntu:24.04"]["base"] == "ubuntu-on-trixie" and "stand-in" in rows["ubuntu:24.04"]["note"]
    assert rows["ubuntu:24.04"]["contents"] == "Debian trixie minbase + procps, sensible-utils"
    assert rows["debian:bookworm"]["contents"] == "Debian bookworm minbase"  # nothing added: faithful
    assert "no python3" in rows["debian:bookworm"]["note"]
    from autoenvscaling.sandbox.rootfs import base_rootfs_built
    assert rows["debian:bookworm"]["built"] == base_rootfs_built("debian-bookworm")


def test_exit_3_with_hints_when_nothing_can_run_tasks(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    result = run_doctor(PATH=str(empty), DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "no sandbox backend can run tasks here" in result.stderr
    assert "hint: apt-get install bubblewrap" in result.stdout
    assert "no engine answers" in result.stdout


def test_cgroup_layout_reads_hybrid_and_unified_mount_tables():
    hybrid = ("cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
              "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
              "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n")
    layout = cgroup_layout(hybrid)
    assert layout["layout"] == "hybrid"
    assert set(layout["v1_controllers"]) == {"memory", "pids"}
    assert layout["v2_mount"] == "/sys/fs/cgroup/unified"
    assert cgroup_layout("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")["layout"] == "unified (v2)"
    assert cgroup_layout("")["layout"] == "none"
    # And on this machine, the real table agrees with the kernel's own view of our process.
    here = cgroup_layout()
    v1_in_use = any(line.split(":")[1] for line in Path("/proc/self/cgroup").read_text().splitlines()
                    if not line.startswith("0::"))
    assert here["layout"] in (("hybrid", "legacy (v1)") if v1_in_use else ("unified (v2)", "none"))


@pytest.mark.docker
def _pings(sock) -> bool:
    """Whether the engine at unix socket ``sock`` answers GET /_ping."""
    import socket

    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(str(sock))
            s.sendall(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
            status = s.recv(64).split(b"\r\n", 1)[0]
            return status.startswith(b"HTTP/1.") and b" 200" in status
    except OSError:
        return False


def test_a_real_podman_engine_is_found_through_docker_host(tmp_path):
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed")
    sock = tmp_path / "podman.sock"
    service = subprocess.Popen(["podman", "--runtime", "runc", "--cgroup-manager=cgroupfs", "--events-backend=file",
                                "system", "service", "--time=0", f"unix://{sock}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Until the service answers (its socket appears before it serves): doctor's own probe has a
        # short timeout, which a service still starting on a loaded machine would lose.
        deadline = time.monotonic() + 120
        while not _pings(sock) and time.monotonic() < deadline:
            time.sleep(0.1)
        report = json.loads(run_doctor("--json", DOCKER_HOST=f"unix://{sock}").stdout)
        engine = report["docker_engine"]
        assert engine["reachable"] is True, engine
        assert "API" in engine["version"] and engine["hint"] is None
    finally:
        service.terminate()
        service.wait(timeout=20)


def test_an_empty_cache_reports_the_verifier_runtime_as_not_provisioned(tmp_path):
    report = json.loads(run_doctor("--json", AUTOENVSCALING_CACHE=str(tmp_path)).stdout)
    assert report["cache"]["dir"] == str(tmp_path)
    runtime = report["verifier_runtime"]
    assert runtime["state"] == "not provisioned yet" and runtime["hint"]
    assert runtime["sets"] and not any(s["provisioned"] for s in runtime["sets"])
    assert not (tmp_path / "verifier" / "sets").exists(), "the doctor checks; it never provisions"
    own = runtime["python"]  # the Python uvx runs on in images without python3: not built, and how it will be
    assert own["built"] is False and own["version"] == "3.11" and "first offline verification" in own["hint"]
    assert not list((tmp_path / "verifier").glob("python-*")), "nor builds"


# -- prerequisites registered by plugins ---------------------------------------------------------
class _Present(Prerequisite):
    """A file that exists here."""

    needed_for = "the present feature"

    def check(self) -> PrerequisiteStatus:
        return PrerequisiteStatus(ok=os.path.exists(sys.executable), detail=sys.executable)


class _Missing(Prerequisite):
    needed_for = "the missing feature"

    def check(self) -> PrerequisiteStatus:
        path = "/nonexistent/aes-tool"
        if os.path.exists(path):
            return PrerequisiteStatus(ok=True, detail=path)
        return PrerequisiteStatus(ok=False, detail=f"{path} not found", hint="apt-get install aes-tool")


class _Raises(Prerequisite):
    needed_for = "the broken feature"

    def check(self) -> PrerequisiteStatus:
        return PrerequisiteStatus(ok=True, detail=Path("/nonexistent/aes-config").read_text())


class _NeedsPlugin:
    @hookimpl
    def autoenvscaling_register_prerequisites(self, registrar):
        registrar.add("present-thing", _Present)
        registrar.add("missing-thing", _Missing)
        registrar.add("broken-check", _Raises)
        registrar.add("absent-module", "aes_no_such_module.checks:Check", extra="nothing")


def test_prerequisites_a_plugin_registers_are_in_the_json_report(aes_host, aes_register):
    aes_register(_NeedsPlugin(), name="needs-plugin")
    report = json.loads(json.dumps(collect(aes_host)))  # exactly what --json prints
    rows = {row["name"]: row for row in report["prerequisites"]}
    assert rows["present-thing"] == {"name": "present-thing", "plugin": "needs-plugin",
                                     "needed_for": "the present feature", "ok": True, "detail": sys.executable,
                                     "hint": None}
    assert rows["missing-thing"]["ok"] is False and rows["missing-thing"]["hint"] == "apt-get install aes-tool"
    broken = rows["broken-check"]  # a check that raises is a failed row, not a crashed doctor
    assert broken["ok"] is False and broken["detail"].startswith("the check raised FileNotFoundError")
    assert "needs-plugin" in broken["hint"]
    absent = rows["absent-module"]
    assert absent["ok"] is False and "aes_no_such_module" in absent["detail"]
    assert absent["hint"] == "pip install 'autoenvscaling[nothing]'"
    # The core's own, registered by its built-in plugin next to the backends.
    assert {"bubblewrap", "docker-engine", "nvidia-gpu"} <= set(rows)
    assert rows["bubblewrap"]["ok"] == (shutil.which("bwrap") is not None)
    assert rows["docker-engine"]["ok"] == report["docker_engine"]["reachable"]


def test_the_cli_lists_prerequisites_with_their_hints(tmp_path):
    result = run_doctor(DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    text = result.stdout
    assert "prerequisites (registered by plugins)" in text
    assert "--  docker-engine (autoenvscaling.plugins.builtin)" in text
    assert "hint: start one: `eval" in text.split("docker-engine (autoenvscaling")[1]
    report = json.loads(run_doctor("--json", DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock").stdout)
    assert all(set(row) == {"name", "plugin", "needed_for", "ok", "detail", "hint"} for row in report["prerequisites"])

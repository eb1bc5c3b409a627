"""The offline runtime's own Python: built once on the host, self-contained (its own glibc and loader),
used by the uv shims (and the curl shim's local fetcher) when the image has no python3, and seen by the
verifier's uv commands alone: test.sh itself still finds no python3 where the image has none."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from autoenvscaling.errors import AESError, BuildError
from autoenvscaling.runtime import offline
from autoenvscaling.runtime.offline import PYTHON_MISSING, provided_python, runtime_files, runtime_size
from autoenvscaling.runtime.verifier_runtime import OfflineRuntime
from autoenvscaling.tasks import Task

MOUNT = "/opt/autoenvscaling-verifier/offline"
PATH = f"{MOUNT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.fixture(scope="module")
def own_python() -> Path:
    try:
        return provided_python()
    except AESError as exc:  # no mmdebstrap, or Debian's archive unreachable
        pytest.skip(f"the offline verifier's Python cannot be built here: {exc.message}")


def test_it_is_self_contained_small_and_finds_its_prefix(own_python):
    files = sorted(p for p in own_python.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    assert 15_000_000 < size < 25_000_000, size  # what docker uploads with every offline verification
    names = {p.relative_to(own_python).as_posix() for p in files}
    assert {"bin/python3", "bin/python", "lib/ld.so", "lib/libc.so.6", "lib/python311.zip",
            "lib/python3.11/os.py"} <= names
    assert not any("_ssl" in n or "_test" in n or n.startswith("lib/python3.11/test/") for n in names)
    assert not any(p.is_symlink() for p in own_python.rglob("*"))  # docker uploads regular files only
    proc = subprocess.run([str(own_python / "bin" / "python3"), "-S", "-c",
                           "import sys, sqlite3, ctypes, json; print(sys.executable, sys.prefix, sys.version_info[:2])"],
                          capture_output=True, text=True, env={}, check=True)
    assert proc.stdout.split() == [str(own_python / "bin" / "python3"), str(own_python), "(3,", "11)"]


def test_runtime_files_carry_it_or_say_why_not(own_python, monkeypatch, tmp_path):
    files = runtime_files()
    assert files["python/bin/python3"][1] and files["python/lib/ld.so"][1]  # executable
    assert PYTHON_MISSING not in files
    assert runtime_size(files) - runtime_size(runtime_files(python=False)) > 15_000_000
    assert not any(p.startswith("python/") for p in runtime_files(python=False))

    def fails(cache_dir=None):
        raise BuildError("building the offline verifier's Python failed: E: mirror down", hint="check the mirror")

    monkeypatch.setattr(offline, "provided_python", fails)
    with pytest.warns(UserWarning, match="mirror down"):
        broken = runtime_files(cache_dir=tmp_path / "cache")
    assert not any(p.startswith("python/") for p in broken) and b"mirror down" in broken[PYTHON_MISSING][0]
    assert json.loads(broken["index.json"][0])["problems"] == []  # the packages are not what failed


# -- inside a bwrap sandbox of a python-less image (ubuntu:24.04) -----------------------------------

@pytest.fixture(scope="module")
def bwrap_backend():
    from autoenvscaling.sandbox.bwrap import BwrapBackend

    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    return BwrapBackend()


def verify(backend, script: str, runtime_dir: Path) -> tuple[str, str]:
    """Run ``script`` as the verifier would (runtime mounted, its bin/ first on PATH) in a fresh
    ubuntu:24.04 sandbox; then list the mount point as the agent sees it. (verifier output, agent's)"""
    task = Task.create("no-python3", {}, "nothing", {"environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n"})

    async def go():
        prepared = await backend.prepare(task)
        sandbox = await backend.create(task, prepared)
        async with sandbox:
            seen = await sandbox.exec_verifier(script, mounts={MOUNT: runtime_dir}, timeout=120,
                                               env={"PATH": PATH, "HOME": "/root", "AUTOENVSCALING_OFFLINE": "1"})
            agent = await sandbox.exec(f"command -v python3 || echo agent-has-no-python3; "
                                       f"[ -e {MOUNT}/bin ] && echo agent-sees-the-runtime || echo no-runtime")
            return seen.stdout + seen.stderr, agent.stdout + agent.stderr

    return asyncio.run(go())


def test_only_the_uv_shims_see_it_on_a_python_less_image(bwrap_backend, own_python):
    out, agent = verify(bwrap_backend, """
echo "== test.sh"; command -v python3 python || echo none
echo "== uvx"; uvx --with pytest==8.4.1 python -c "import sys, pytest; print(sys.version_info[:2], pytest.__version__)"
echo "== subprocess"; uvx --with pytest==8.4.1 python -c "import subprocess; print(subprocess.check_output(['python3', '-c', 'print(7)'], text=True).strip())"
echo "== uv-run"; cd /tmp && uv run --python 3.12 python -c "print('ran')" 2>&1
echo "== venv"; uv venv /tmp/v >/dev/null && . /tmp/v/bin/activate && uv pip install pytest==8.4.1 >/dev/null && pytest --version 2>&1
echo "== system"; deactivate; uv pip install --system pytest==8.4.1 2>&1; echo "rc=$?"
""", OfflineRuntime(cache_dir=bwrap_backend.cache_dir).materialise())
    s = sections(out)
    assert s["test.sh"].strip() == "none"  # test.sh itself: no python3, as in the image
    assert s["uvx"].strip() == "(3, 11) 8.4.1"
    assert s["subprocess"].strip() == "7"  # python3 on the tool's PATH, as in uv's environments
    assert s["uv-run"].splitlines() == ["uv (offline verifier): Python 3.12 cannot be downloaded offline; using the "
                                        "offline verifier's own Python 3.11 (the image has no python3)", "ran"]
    assert s["venv"].strip() == "pytest 8.4.1"
    assert "No system Python installation found" in s["system"] and "rc=2" in s["system"]
    assert agent.splitlines() == ["agent-has-no-python3", "no-runtime"]


def test_curl_reaches_local_servers_without_curl_or_python3_in_the_image(bwrap_backend, own_python):
    out, _ = verify(bwrap_backend, """
mkdir -p /srv && echo hello-from-server > /srv/index.txt
uvx python -m http.server 8765 --bind 127.0.0.1 --directory /srv >/dev/null 2>&1 &
for _ in $(seq 600); do curl -fsS -o /dev/null http://127.0.0.1:8765/index.txt 2>/dev/null && break; sleep 0.1; done
echo "== get"; curl -fsS http://127.0.0.1:8765/index.txt; echo "rc=$?"
echo "== internet"; curl -fsS https://example.com/ 2>&1; echo "rc=$?"
""", OfflineRuntime(cache_dir=bwrap_backend.cache_dir).materialise())
    s = sections(out)
    assert s["get"].splitlines() == ["hello-from-server", "rc=0"]
    assert "Could not resolve host: example.com" in s["internet"] and "rc=6" in s["internet"]


def test_without_it_the_shims_fail_clearly(bwrap_backend, tmp_path):
    from autoenvscaling.runtime.verifier_runtime import materialise_files

    files = dict(runtime_files(python=False))
    files[PYTHON_MISSING] = (b"building the offline verifier's Python failed: E: mirror down\n", False)
    out, _ = verify(bwrap_backend, """
echo "== uvx"; uvx --with pytest==8.4.1 pytest --version 2>&1; echo "rc=$?"
echo "== curl"; curl -fsS http://127.0.0.1:9/ 2>&1; echo "rc=$?"
""", materialise_files(files, "offline", tmp_path))
    s = sections(out)
    assert "this image has no python3, and the verifier's own Python is missing: building the offline " \
           "verifier's Python failed: E: mirror down" in s["uvx"] and "rc=2" in s["uvx"]
    assert "this image has no curl, and the verifier's own Python" in s["curl"] and "rc=2" in s["curl"]


def sections(output: str) -> dict[str, str]:
    """Split ``== name`` delimited output into {name: text}."""
    out: dict[str, str] = {}
    name = ""
    for line in output.splitlines():
        if line.startswith("== "):
            name = line[3:].strip()
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return out

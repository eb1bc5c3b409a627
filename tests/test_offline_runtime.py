"""The offline verifier runtime: provisioning on the host, the shims inside a real bwrap sandbox, and
the Harbor cookbook tasks' own test.sh (apt-get, curl | sh, uvx pytest) verified with no network."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autoenvscaling.errors import AESError, MissingPrerequisite
from autoenvscaling.runtime import offline
from autoenvscaling.runtime.offline import DEFAULT_PACKAGES, provision, runtime_files, runtime_size
from autoenvscaling.runtime.paths import VERIFIER_RUNTIME
from autoenvscaling.tasks.harbor import read_task

GOOD = Path(__file__).parent / "fixtures" / "defects" / "good"
# The shims' tests run where the image has python3, as most verifiers' images do (debian:bookworm has
# none; tests/runtime/test_verifier_python.py covers images without it).
WITH_PYTHON3 = ("FROM debian:bookworm-slim\n"
                "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 \\\n"
                "    && rm -rf /var/lib/apt/lists/*\n"
                "WORKDIR /app\n")
PYTHON_IMAGE = "FROM python:3.13-slim\nWORKDIR /app\n"  # python and pip, as in the official image
HARBOR = Path(__file__).parent / "fixtures" / "harbor"
OFFLINE_PATH = f"{VERIFIER_RUNTIME}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# -- host side: provisioning ------------------------------------------------------------------

def test_default_set_is_provisioned_once_with_its_dependencies():
    set_dir = provision(DEFAULT_PACKAGES)
    manifest = json.loads((set_dir / "manifest.json").read_text())
    versions = {d["name"]: d["version"] for d in manifest["dists"]}
    assert versions["pytest"] == "8.4.1" and versions["pytest-json-ctrf"] == "0.3.5"
    assert {"pluggy", "iniconfig", "packaging", "pygments"} <= set(versions)
    pytest_dist = next(d for d in manifest["dists"] if d["name"] == "pytest")
    assert pytest_dist["scripts"]["pytest"] == "pytest:console_main"
    assert pytest_dist["deps"]["pluggy"] == versions["pluggy"]
    root = set_dir.parent.parent
    for dist in manifest["dists"]:
        with zipfile.ZipFile(root / dist["stored"]) as wheel:  # each dist is an importable wheel
            names = set(wheel.namelist())
            assert any(n.endswith(".dist-info/METADATA") for n in names)
            # with this Python's bytecode beside each module, for zipimport to load
            assert {n + "c" for n in names if n.endswith(".py")} <= names, dist["name"]
        assert dist["path"] == f"dists/{Path(dist['stored']).name}"  # in the runtime: the wheel's own name
    # Cached: a fresh process finds the set on disk and runs no pip (no subprocess at all).
    again = subprocess.run([sys.executable, "-c", "import subprocess\n"
                            "def refuse(*args, **kwargs): raise AssertionError(f'ran {args[0]!r}')\n"
                            "subprocess.run = subprocess.Popen = refuse\n"
                            "from autoenvscaling.runtime.offline import provision, DEFAULT_PACKAGES\n"
                            "print(provision(DEFAULT_PACKAGES))"], capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.strip() == str(set_dir), again.stderr


def test_a_wheelhouse_replaces_pypi(tmp_path):
    wheelhouse = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--dest", str(wheelhouse), "iniconfig==2.1.0"], check=True, capture_output=True)
    set_dir = provision(["iniconfig==2.1.0"], cache_dir=tmp_path / "cache", wheelhouse=wheelhouse)
    manifest = json.loads((set_dir / "manifest.json").read_text())
    assert [(d["name"], d["version"]) for d in manifest["dists"]] == [("iniconfig", "2.1.0")]
    # A pruned cache is noticed and provisioned again.
    (set_dir.parent.parent / manifest["dists"][0]["stored"]).unlink()
    assert provision(["iniconfig==2.1.0"], cache_dir=tmp_path / "cache", wheelhouse=wheelhouse) == set_dir
    assert (set_dir.parent.parent / manifest["dists"][0]["stored"]).is_file()
    # Parallel workers provisioning the same set into a fresh cache: one result, no debris.
    code = ("import sys; from pathlib import Path; from autoenvscaling.runtime.offline import provision; "
            f"print(provision(['iniconfig==2.1.0'], cache_dir=Path(sys.argv[1]), wheelhouse=Path({str(wheelhouse)!r})))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "fresh")], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outputs = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert len(outputs) == 1 and all(p.returncode == 0 for p in procs)
    assert sorted(x.name for x in (tmp_path / "fresh" / "verifier").iterdir()) == [".lock", "dists", "sets"]
    with pytest.raises(MissingPrerequisite, match=r"cannot provision iniconfig==2\.0 from the wheelhouse") as info:
        provision(["iniconfig==2.0"], cache_dir=tmp_path / "cache", wheelhouse=wheelhouse)
    assert "AUTOENVSCALING_WHEELHOUSE" in (info.value.hint or "")


def test_the_stored_bytecode_is_what_imports_and_a_foreign_python_compiles_the_source(tmp_path):
    """The unchecked-hash .pyc beside each module is what zipimport runs: with its source edited
    afterwards, the import still gives the compiled value. With a foreign magic number (another
    Python version's bytecode) the import compiles the edited source instead."""
    set_dir = provision(DEFAULT_PACKAGES)
    dist = next(d for d in json.loads((set_dir / "manifest.json").read_text())["dists"] if d["name"] == "iniconfig")
    with zipfile.ZipFile(set_dir.parent.parent / dist["stored"]) as stored:
        members = {n: stored.read(n) for n in stored.namelist()}
    version = "iniconfig/_version.py"
    assert version + "c" in members and b"2.1.0" in members[version]

    def imported(changes: dict[str, bytes]) -> str:
        path = tmp_path / f"{len(list(tmp_path.iterdir()))}.whl"
        with zipfile.ZipFile(path, "w") as out:
            for name, data in {**members, **changes}.items():
                out.writestr(name, data)
        code = "import iniconfig._version as v; print(v.version)"
        done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(path)!r}); {code}"],
                              capture_output=True, text=True, check=True)
        return done.stdout.strip()

    edited = members[version].replace(b"2.1.0", b"9.9.9")
    assert imported({version: edited}) == "2.1.0"  # the bytecode ran, not the edited source
    foreign = b"\0\0\r\n" + members[version + "c"][4:]
    assert imported({version: edited, version + "c": foreign}) == "9.9.9"  # no bytecode of its version: the source


def test_a_wheel_with_a_path_outside_its_root_is_refused(tmp_path):
    from autoenvscaling.errors import BuildError
    from autoenvscaling.runtime.offline import _store_wheel

    wheel = tmp_path / "evil-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        out.writestr("evil/__init__.py", "")
        out.writestr("../../outside.py", "x = 1\n")
    with pytest.raises(BuildError, match=r"holds a file outside its root \(\.\./\.\./outside\.py\)"):
        _store_wheel(wheel, tmp_path / "store" / wheel.name, "/opt/x")
    assert not (tmp_path / "outside.py").exists() and not list((tmp_path / "store").iterdir())


def test_runtime_files_hold_the_shims_and_packages_and_record_failures(tmp_path):
    files = runtime_files()
    assert files is runtime_files()  # cached in-process
    for shim in ("bin/apt-get", "bin/apt", "bin/curl", "bin/uv", "bin/uvx"):
        assert files[shim][1], f"{shim} must be executable"
    assert not files["libexec/uvshim"][1]
    assert "dists/pytest-8.4.1-py3-none-any.whl" in files  # the wheel's own name: pip finds it
    assert "python/bin/python3" in files  # the verifier's own Python, for images without python3
    shims = runtime_files(python=False)
    assert 1_000_000 < runtime_size(shims) < 6_000_000 and len(shims) < 20 and "python/bin/python3" not in shims
    index = json.loads(files["index.json"][0])
    assert index["problems"] == [] and "8.4.1" in index["dists"]["pytest"]
    empty_wheelhouse = tmp_path / "empty"
    empty_wheelhouse.mkdir()
    monkey_env = {offline.ENV_WHEELHOUSE: str(empty_wheelhouse)}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in monkey_env.items():
            mp.setenv(k, v)
        with pytest.warns(UserWarning, match="cannot provision"):
            broken = runtime_files([("pytest==8.4.1",)], cache_dir=tmp_path / "cache")
    problems = json.loads(broken["index.json"][0])["problems"]
    assert len(problems) == 1 and "the wheelhouse" in problems[0]
    assert "bin/uvx" in broken and not any(p.startswith("dists/") for p in broken)


# -- inside a real bwrap sandbox ----------------------------------------------------------------

@pytest.fixture(scope="module")
def bwrap():
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    try:
        return make_backend("bwrap", create_host(strict=True))
    except AESError as exc:
        pytest.skip(f"bwrap backend unavailable: {exc.message}")


def run_offline(backend, script: str, timeout: float = 120.0, dockerfile: str = WITH_PYTHON3):
    """Run ``script`` in a fresh sandbox of the good fixture with the runtime on PATH and its
    environment, as the trial runner sets it up at verification time."""
    from autoenvscaling.runtime.verifier_runtime import OfflineRuntime

    async def go():
        task = read_task(GOOD).with_files({"environment/Dockerfile": dockerfile})
        prepared = await backend.prepare(task)
        sandbox = await backend.create(task, prepared)
        async with sandbox:
            await sandbox.upload_files(runtime_files(), VERIFIER_RUNTIME)
            env = {**OfflineRuntime().environment(VERIFIER_RUNTIME).env, "PATH": OFFLINE_PATH, "HOME": "/root"}
            return await sandbox.exec(script, timeout=timeout, env=env)
    return asyncio.run(go())


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


def test_apt_and_curl_shims(bwrap):
    result = run_offline(bwrap, """
echo "== update"; apt-get update 2>&1; echo "rc=$?"
echo "== install-present"; apt-get install -y --no-install-recommends curl python3=3.11.2-1+b1 2>&1; echo "rc=$?"
echo "== install-missing"; apt -q install -y git jq 2>&1; echo "rc=$?"
echo "== curl-other"; curl -fsSL https://pypi.org/simple/ 2>&1; echo "rc=$?"
echo "== curl-output"; curl -LsSf -o /tmp/uv.sh https://astral.sh/uv/install.sh; echo "rc=$? lines=$(wc -l < /tmp/uv.sh)"
echo "== installer"; curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh 2>&1; echo "rc=$?"
echo "== env"; . "$HOME/.local/bin/env"; command -v uvx; echo "$PATH"
echo "== real-network"; python3 -c "import socket; socket.create_connection(('151.101.0.223', 443), timeout=3)" 2>&1 | tail -1
""")
    s = sections(result.stdout)
    assert "skipping 'apt-get update'" in s["update"] and "rc=0" in s["update"]
    assert "already available: curl python3" in s["install-present"] and "rc=0" in s["install-present"]
    assert "cannot install packages without network: git jq" in s["install-missing"]
    assert "environment/Dockerfile" in s["install-missing"] and "rc=100" in s["install-missing"]
    assert "Could not resolve host: pypi.org (network disabled in the offline verifier" in s["curl-other"]
    assert "rc=6" in s["curl-other"]
    assert "rc=0 lines=" in s["curl-output"]
    assert "everything's installed!" in s["installer"] and "rc=0" in s["installer"]
    assert s["env"].splitlines()[0] == "/root/.local/bin/uvx"
    assert s["env"].splitlines()[1].startswith("/root/.local/bin:")
    assert "Network is unreachable" in s["real-network"] or "Errno" in s["real-network"]


def test_a_failed_curl_never_removes_what_it_did_not_create(bwrap):
    result = run_offline(bwrap, """
echo keep > /tmp/existing
echo "== devnull"; curl -sS -o /dev/null https://example.com/ 2>&1; echo "rc=$?"
[ -c /dev/null ] && echo x > /dev/null && [ ! -s /dev/null ] && echo still-the-null-device
echo "== existing"; curl -fsS -o /tmp/existing https://example.com/x 2>&1; echo "rc=$? $(cat /tmp/existing)"
echo "== new"; curl -fsS --output=/tmp/new https://example.com/x 2>&1; echo "rc=$?"; [ -e /tmp/new ] || echo no-file
echo "== remote-name"; cd /tmp && curl -fsSO https://example.com/file.txt 2>&1; echo "rc=$?"; [ -e /tmp/file.txt ] || echo no-file
echo "== staging"; ls -a /tmp | grep -c aes-curl
echo "== served"; curl -LsSf -o /tmp/existing https://astral.sh/uv/install.sh; echo "rc=$? $(head -c 9 /tmp/existing)"
""")
    s = sections(result.stdout)
    assert "rm:" not in result.stdout + result.stderr  # the shim once ran rm -f on its -o target, /dev/null too
    assert s["devnull"].splitlines()[1:] == ["rc=6", "still-the-null-device"]
    assert s["existing"].splitlines()[-1] == "rc=6 keep"
    assert s["new"].splitlines()[-2:] == ["rc=6", "no-file"]
    assert s["remote-name"].splitlines()[-2:] == ["rc=6", "no-file"]
    assert s["staging"].strip() == "0"
    assert s["served"].strip() == "rc=0 #!/bin/sh"  # a success still replaces the target


def test_curl_treats_names_that_etc_hosts_maps_to_loopback_as_local(bwrap):
    """A real HTTP server in the sandbox, reached by names added to /etc/hosts; the image has no curl,
    so the shim's python3 fetcher serves them. Names mapped elsewhere are still the internet."""
    result = run_offline(bwrap, """
mkdir -p /srv && echo hello-from-server > /srv/index.txt
cd /srv && python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &
printf '127.0.0.1 api.internal\n::1 v6.internal # comment\n10.0.0.5 remote.internal\n' >> /etc/hosts
for _ in $(seq 600); do curl -fsS -o /dev/null http://api.internal:8765/index.txt 2>/dev/null && break; sleep 0.1; done
echo "== get"; curl -fsS http://api.internal:8765/index.txt; echo "rc=$?"
echo "== output"; curl -fsSL -o /tmp/got -w '%{http_code}\n' http://api.internal:8765/index.txt; echo "rc=$? $(cat /tmp/got)"
echo "== 404"; curl -fsS http://api.internal:8765/missing 2>&1; echo "rc=$?"
echo "== 404-without-f"; curl -s -o /dev/null -w '%{http_code}\n' http://api.internal:8765/missing; echo "rc=$?"
echo "== v6"; curl -sS http://v6.internal:8765/ >/dev/null 2>&1; echo "rc=$?"
echo "== not-loopback"; curl -sS http://remote.internal:8765/ 2>&1; echo "rc=$?"
echo "== unsupported"; curl --frobnicate http://api.internal:8765/ 2>&1; echo "rc=$?"
echo "== image-curl"; printf '#!/bin/sh\necho "image curl: $*"\n' > /usr/local/bin/curl && chmod +x /usr/local/bin/curl
curl -s http://api.internal:8765/index.txt; curl -s https://example.com/ 2>&1 | cut -c1-41  # the shim, not the image curl
""")
    s = sections(result.stdout)
    assert s["get"].splitlines() == ["hello-from-server", "rc=0"]
    assert s["output"].splitlines() == ["200", "rc=0 hello-from-server"]
    assert s["404"].splitlines() == ["curl: (22) The requested URL returned error: 404", "rc=22"]
    assert s["404-without-f"].splitlines() == ["404", "rc=0"]
    assert s["v6"].strip() == "rc=7"  # local (nothing listens on ::1), not refused as the internet
    assert "curl: (6) Could not resolve host: remote.internal (network disabled" in s["not-loopback"]
    assert "option --frobnicate is not supported" in s["unsupported"] and "rc=2" in s["unsupported"]
    # With a curl of its own in the image, local URLs go to it; the internet still does not.
    assert s["image-curl"].splitlines() == ["image curl: -s http://api.internal:8765/index.txt",
                                            "curl: (6) Could not resolve host: example"]


@pytest.mark.parametrize("name", ["shim-curl-devnull", "shim-curl-hosts"])
def test_shim_fixture_tasks_pass_every_gate(bwrap, name):
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator
    from autoenvscaling.plugins import create_host

    host = create_host(strict=True)
    later = tuple(g for g in host.gates.names() if g in ("decontamination", "near-duplicate", "calibration"))
    validator = Validator(host=host, backend=bwrap, settings=GateSettings(flaky_runs=2, skip=later))
    report = asyncio.run(validator.validate(HARBOR / name))
    assert report.status == "valid", (report.reason, [g.evidence[0].output_tail for g in report.gates if g.evidence][-1])


def test_uv_shims_run_provisioned_versions_only(bwrap):
    result = run_offline(bwrap, """
echo "== uvx"; uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 pytest --version 2>&1; echo "rc=$?"
echo "== at"; uvx pytest@8.4.1 --version 2>&1
echo "== from-range"; uvx --from 'pytest>=8,<9' pytest --version 2>&1
echo "== wrong-version"; uvx --with pytest==8.4.2 pytest --version 2>&1; echo "rc=$?"
echo "== unknown"; uvx --with requests==2.32.0 pytest --version 2>&1; echo "rc=$?"
echo "== uv-run"; cd /tmp && uv run --with pytest==8.4.1 python -c "import pytest, sys; print(pytest.__version__, sys.path[0] == '')"
echo "== venv"; cd /tmp && uv venv .tbench-testing >/dev/null && . .tbench-testing/bin/activate && uv pip install pytest==8.4.1 >/dev/null && command -v pytest && pytest --version 2>&1 && uv run pytest --version 2>&1
echo "== unsupported"; uv sync 2>&1; echo "rc=$?"
echo "== isolation"; deactivate; mkdir -p /usr/local/lib/python3.11/dist-packages && echo "X = 1" > /usr/local/lib/python3.11/dist-packages/imagepkg.py
python3 -c "import imagepkg" && echo image-sees-it
uv run --with pytest==8.4.1 python -c "import imagepkg" && echo uv-run-sees-it
uvx --with 'pytest>=8,<9' python -c "import imagepkg" 2>&1 | tail -1
""")
    s = sections(result.stdout)
    assert s["uvx"].strip().splitlines() == ["pytest 8.4.1", "rc=0"]
    assert s["at"].strip() == "pytest 8.4.1"
    assert s["from-range"].strip() == "pytest 8.4.1"
    assert ("pytest==8.4.2 is not provisioned in the offline verifier (provisioned: pytest==8.4.1)" in s["wrong-version"])
    assert "rc=2" in s["wrong-version"]
    assert "requests==2.32.0 is not provisioned" in s["unknown"]
    assert s["uv-run"].strip() == "8.4.1 True"
    assert s["venv"].strip().splitlines() == ["/tmp/.tbench-testing/bin/pytest", "pytest 8.4.1", "pytest 8.4.1"]
    assert "'uv sync' is not supported by the offline verifier" in s["unsupported"] and "rc=2" in s["unsupported"]
    # uvx runs tools isolated from the image's site-packages, as uv's tool environments are.
    assert s["isolation"].splitlines() == ["image-sees-it", "uv-run-sees-it",
                                           "ModuleNotFoundError: No module named 'imagepkg'"]


PIP_SCRIPT = r"""
echo "== pinned"; pip install --no-cache-dir -q pytest==8.4.1 2>&1 | grep -v WARNING; command -v pytest; pytest --version
echo "== show"; pip show pytest | grep -E '^Version'
echo "== wrong-version"; pip3 install pytest==8.4.2 2>&1; echo "rc=$?"
echo "== unknown"; printf 'requests==2.32.0\n' > /tmp/req.txt; pip install -r /tmp/req.txt 2>&1; echo "rc=$?"
echo "== satisfied"; pip install --upgrade pip 2>&1 | grep -c 'Requirement already satisfied'
echo "== module"; pip uninstall -y -q pytest 2>&1 | grep -v WARNING; python3 -m pip install -q pytest==8.4.1 2>&1 | grep -v WARNING; pytest --version
echo "== module-wrong"; python3 -m pip install pytest==8.4.2 2>&1 | grep -o 'satisfies the requirement pytest==8.4.2 (from versions: 8.4.1)'
echo "== venv"; python3 -m venv /tmp/v && . /tmp/v/bin/activate && pip install -q pytest==8.4.1 2>&1; command -v pytest; deactivate
"""


def test_pip_installs_provisioned_versions_only(bwrap):
    """bin/pip checks the requirements like the uv shim, then the image's own pip installs them from
    the provisioned wheels; PIP_NO_INDEX/PIP_FIND_LINKS serve `python3 -m pip` and a venv's pip."""
    result = run_offline(bwrap, PIP_SCRIPT, dockerfile=PYTHON_IMAGE)
    s = sections(result.stdout)
    assert s["pinned"].splitlines() == ["/usr/local/bin/pytest", "pytest 8.4.1"], result.stdout
    assert s["show"].strip() == "Version: 8.4.1"  # a real install: pip itself knows it
    assert "pytest==8.4.2 is not provisioned in the offline verifier (provisioned: pytest==8.4.1)" in s["wrong-version"]
    assert "rc=2" in s["wrong-version"] and "AUTOENVSCALING_VERIFIER_PACKAGES='pytest==8.4.2'" in s["wrong-version"]
    assert "requests==2.32.0 is not provisioned" in s["unknown"] and "rc=2" in s["unknown"]
    assert s["satisfied"].strip() == "1"  # pip is installed: satisfied, as pip says online without network
    assert s["module"].strip() == "pytest 8.4.1"
    assert s["module-wrong"].strip() == "satisfies the requirement pytest==8.4.2 (from versions: 8.4.1)"
    assert s["venv"].strip() == "/tmp/v/bin/pytest"


def test_pip_in_an_image_without_pip_is_not_found(bwrap):
    result = run_offline(bwrap, "pip install pytest==8.4.1; echo rc=$?")
    assert result.stdout.strip() == "rc=127"
    assert "pip: command not found" in result.stderr


@pytest.mark.parametrize("name, rewards", [
    ("simple-task", {"reward": 1.0}),
    ("skills", {"reward": 1.0}),
    ("multi-reward", {"correctness": 1.0, "performance": 1.0}),
    ("multi-step", {"scaffold": 1.0, "implement": 1.0, "document": 1.0}),
])
def test_cookbook_tasks_verify_offline_oracle_1_nop_0(bwrap, harbor_cookbook, name, rewards):
    """The cookbook's exact test.sh files (unchanged) give oracle = 1 and nop = 0 with no network."""
    from autoenvscaling.agents.builtin import NopAgent, OracleAgent
    from autoenvscaling.runtime.trial import TrialRunner

    task = read_task(harbor_cookbook / name)
    runner = TrialRunner(bwrap)

    async def go():
        prepared = await bwrap.prepare(task)
        return await asyncio.gather(runner.run(task, OracleAgent(), prepared=prepared),
                                    runner.run(task, NopAgent(), prepared=prepared))
    oracle, nop = asyncio.run(go())
    assert oracle.status == "ok", oracle.error
    assert oracle.rewards == rewards, oracle.steps[-1].verifier.output_tail
    assert nop.status == "ok", nop.error
    assert nop.reward == 0.0
    if name != "multi-step":  # the others bootstrapped apt, curl | sh and uvx through the shims
        assert "skipping 'apt-get update'" in oracle.steps[-1].verifier.output_tail

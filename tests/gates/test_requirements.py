"""Task requirements against backend capabilities: refused when the backend cannot honour them here,
a warning when the policy clamps or denies them; GPU detection and passthrough arguments.

No GPU on the CI machines: a task asks for one more GPU than this machine has, so the refusal holds
on any machine. A GPU machine is stood in for by a registered bwrap subclass that declares two H100s
(its capabilities, not a patch), which is how the hint's "use --backend NAME" is proven. The real
passthrough (device nodes in a sandbox, the engine's device request honoured) needs a GPU and is
not exercised here.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autoenvscaling.gates.base import Gate, GateContext, GateResult, GateSettings
from autoenvscaling.gates.lint import LintGate, lint_findings, lint_task
from autoenvscaling.plugins import hookimpl
from autoenvscaling.sandbox.base import BackendCapabilities, PreparedEnvironment, SandboxPolicy
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.sandbox.gpu import (GpuInventory, bwrap_gpu_args, detect_gpus, engine_gpu_support,
                                        gpu_type_matches, host_gpus, parse_smi_listing)
from autoenvscaling.sandbox.select import BackendCatalog
from autoenvscaling.tasks import EnvironmentConfig, Task, read_task, write_task
from autoenvscaling.tasks.requirements import requirements_of
from autoenvscaling.testing.toy import ToyDomain

HARBOR = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
SMI = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1b2c)\n"
       "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-3d4e)\n")


def toy_task(**environment: object) -> Task:
    task = ToyDomain().generate("write-file", seed=7)
    env = task.config.environment.model_copy(update=environment)
    return task.with_config(task.config.model_copy(update={"environment": env}))


class TwoH100Bwrap(BwrapBackend):
    """bwrap on a (declared) machine with two H100s: what a GPU host's capabilities look like."""

    name = "bwrap-h100"

    def capabilities(self) -> BackendCapabilities:
        return super().capabilities().model_copy(update={"gpus": 2, "gpu_types": ("NVIDIA H100 80GB HBM3",)})


class _GpuHost:
    @hookimpl
    def autoenvscaling_register_sandbox_backends(self, registrar):
        registrar.add("bwrap-h100", TwoH100Bwrap)


@pytest.fixture
def gpu_catalog(aes_host, aes_register):
    if not BwrapBackend.available()[0]:
        pytest.skip("bubblewrap cannot run here")
    aes_register(_GpuHost(), name="gpu-host")
    return BackendCatalog(aes_host)


def test_a_task_asking_for_more_gpus_than_this_machine_has_is_refused_at_lint():
    wanted = host_gpus().count + 1
    task = toy_task(gpus=wanted, gpu_types=["H100"])
    problems = lint_task(task, backend="bwrap")
    has = "none" if not host_gpus().count else f"only {host_gpus().count}"
    assert problems == [f"needs {wanted} GPU{'s' if wanted > 1 else ''} (H100); backend bwrap on this machine has "
                        f"{has}: run on a machine with an NVIDIA GPU (bwrap or docker)"]
    ctx = GateContext(backend=None, runner=None, settings=GateSettings(), backend_name="bwrap")
    gate = asyncio.run(LintGate().check(task, ctx))
    assert gate.status == "fail" and gate.reason == problems[0]


def test_the_hint_names_a_registered_backend_that_has_the_gpus(gpu_catalog):
    task = toy_task(gpus=1, gpu_types=["h100"])
    assert lint_task(task, backend="bwrap", catalog=gpu_catalog) == [
        "needs 1 GPU (h100); backend bwrap on this machine has none: use --backend bwrap-h100"]
    assert lint_task(task, backend="bwrap-h100", catalog=gpu_catalog) == []
    wrong_type = toy_task(gpus=1, gpu_types=["A100"])
    assert lint_task(wrong_type, backend="bwrap-h100", catalog=gpu_catalog) == [
        "needs 1 GPU (A100); this machine has NVIDIA H100 80GB HBM3: run on a machine with A100 GPUs "
        "(bwrap or bwrap-h100 or docker)"]
    too_many = toy_task(gpus=3)
    assert lint_task(too_many, backend="bwrap-h100", catalog=gpu_catalog)[0].startswith(
        "needs 3 GPUs; backend bwrap-h100 on this machine has only 2: run on a machine with an NVIDIA GPU")


def test_tasks_validate_json_refuses_the_gpu_task(tmp_path):
    wanted = host_gpus().count + 1
    write_task(toy_task(gpus=wanted), tmp_path / "gpu-task")
    result = _cli("tasks", "validate", "--json", "--skip", "build", "--skip", "oracle", "--skip", "null",
                  "--skip", "redteam", "--skip", "reset", "--skip", "flaky", str(tmp_path / "gpu-task"))
    assert result.returncode == 0, result.stderr
    [report] = json.loads(result.stdout)
    assert report["status"] == "invalid"
    assert report["reason"].startswith(f"lint: needs {wanted} GPU"), report["reason"]
    assert "run on a machine with an NVIDIA GPU" in report["reason"]


def test_tasks_run_refuses_the_gpu_task_instead_of_running_without_it(tmp_path):
    if not BwrapBackend.available()[0]:
        pytest.skip("bubblewrap cannot run here")
    wanted = host_gpus().count + 1
    write_task(toy_task(gpus=wanted), tmp_path / "gpu-task")
    result = _cli("tasks", "run", "--json", "--agent", "oracle", str(tmp_path / "gpu-task"))
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["status"] == "error" and row["commands"] == 0 and row["reward"] == 0
    assert row["reason"].startswith(f"needs {wanted} GPU"), row


def test_a_gpu_optional_task_is_a_warning_and_runs_without_the_gpu(tmp_path, gpu_catalog):
    wanted = host_gpus().count + 1
    task = toy_task(gpus=wanted, gpu_optional=True)
    assert requirements_of(task).gpu_optional
    assert lint_task(task, backend="bwrap") == []  # no refusal
    [finding] = lint_findings(task, backend="bwrap")
    assert finding.level == "warning"
    assert finding.text.startswith(f"asks for {wanted} GPU"), finding.text
    assert "it runs without them (gpu_optional)" in finding.text
    one = toy_task(gpus=1, gpu_optional=True)
    [hint] = lint_findings(one, backend="bwrap", catalog=gpu_catalog)
    assert hint.text.endswith("for the full check use --backend bwrap-h100"), hint.text
    assert lint_findings(one, backend="bwrap-h100", catalog=gpu_catalog) == []
    # and it really runs (the toy oracle scores 1) on this machine's bwrap, with whatever GPUs are here
    write_task(task, tmp_path / "gpu-optional")
    result = _cli("tasks", "run", "--json", "--agent", "oracle", str(tmp_path / "gpu-optional"))
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["status"] == "ok" and row["reward"] == 1.0, row


def test_a_compose_task_is_refused_on_bwrap_naming_docker():
    task = read_task(HARBOR / "compose-sidecar-http")
    assert requirements_of(task).compose is not None
    [problem] = lint_task(task, backend="bwrap")
    assert problem.endswith("multi-container (compose) environments run on the docker backend (use --backend docker)")
    assert lint_task(task, backend="docker") == []


def test_internet_and_explicit_caps_are_warnings_not_refusals():
    task = toy_task(allow_internet=True, memory_mb=65536)
    findings = lint_findings(task, backend="bwrap")
    assert [f.level for f in findings] == ["warning", "warning"], findings
    assert findings[0].text.startswith("allow_internet is not granted (the policy keeps it offline; "
                                       "--network task grants it)")
    assert findings[1].text == "memory_mb = 65536 is capped at 4096 MB by the sandbox policy"
    granting = BackendCatalog(_builtin_host(), SandboxPolicy(network="task"))
    assert lint_findings(toy_task(allow_internet=True), backend="bwrap", catalog=granting) == []
    asked = lint_findings(toy_task(storage_mb=10240), backend="bwrap")
    assert [f.text for f in asked] == ["storage_mb = 10240 is capped at 2048 MB by the sandbox policy"]
    # Harbor's implicit storage_mb = 10240 is no request: a task.toml that never set it gets no warning.
    task = toy_task()
    unset = task.with_config(task.config.model_copy(update={"environment": EnvironmentConfig(memory_mb=512)}))
    assert unset.config.environment.storage_mb == 10240 and lint_findings(unset, backend="bwrap") == []


class NoBrowserBwrap(BwrapBackend):
    """A backend that cannot run a browser (a registered subclass, as a third party might ship)."""

    name = "bwrap-nobrowser"
    supports_browser = False


class _NoBrowserHost:
    @hookimpl
    def autoenvscaling_register_sandbox_backends(self, registrar):
        registrar.add("bwrap-nobrowser", NoBrowserBwrap)


def test_a_browser_is_refused_where_the_backend_cannot_run_one(aes_host, aes_register):
    if not BwrapBackend.available()[0]:
        pytest.skip("bubblewrap cannot run here")
    aes_register(_NoBrowserHost(), name="nobrowser-host")
    catalog = BackendCatalog(aes_host)
    refusal = "the task asks for a browser; backend bwrap-nobrowser provides none here: use --backend bwrap"
    assert lint_task(toy_task(browser=True), backend="bwrap-nobrowser", catalog=catalog) == [refusal]
    assert lint_task(toy_task(browser=True), backend="bwrap", catalog=catalog) == []
    task = toy_task()
    by_tool = task.with_config(task.config.model_copy(update={
        "agent": task.config.agent.model_copy(update={"tools": ["bash", "browser"]})}))
    assert requirements_of(by_tool).browser and not requirements_of(task).browser
    assert refusal in lint_task(by_tool, backend="bwrap-nobrowser", catalog=catalog)


def test_gpu_detection_reads_a_dev_directory(tmp_path):
    dev, libs = tmp_path / "dev", tmp_path / "lib"
    dev.mkdir()
    libs.mkdir()
    for name in ("nvidia1", "nvidia0", "nvidiactl", "nvidia-uvm", "null", "nvidia-caps"):
        (dev / name).write_text("")
    (libs / "libcuda.so.1").write_text("")
    (libs / "libnvidia-ml.so.550.54").write_text("")
    (libs / "libc.so.6").write_text("")
    inventory = detect_gpus(dev, smi_listing=SMI, library_dirs=(str(libs),))
    assert inventory.devices == (str(dev / "nvidia0"), str(dev / "nvidia1"))
    assert inventory.control == (str(dev / "nvidiactl"), str(dev / "nvidia-uvm"))
    assert inventory.models == ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3")
    assert inventory.libraries == (str(libs / "libcuda.so.1"), str(libs / "libnvidia-ml.so.550.54"))
    assert bwrap_gpu_args(inventory, 1) == [
        "--dev-bind", str(dev / "nvidia0"), str(dev / "nvidia0"),
        "--dev-bind", str(dev / "nvidiactl"), str(dev / "nvidiactl"),
        "--dev-bind", str(dev / "nvidia-uvm"), str(dev / "nvidia-uvm"),
        "--ro-bind", str(libs / "libcuda.so.1"), str(libs / "libcuda.so.1"),
        "--ro-bind", str(libs / "libnvidia-ml.so.550.54"), str(libs / "libnvidia-ml.so.550.54")]
    assert bwrap_gpu_args(inventory, 0) == [] and bwrap_gpu_args(GpuInventory(), 2) == []
    empty = tmp_path / "empty-dev"
    empty.mkdir()
    (empty / "null").write_text("")
    assert detect_gpus(empty, smi_listing=SMI).count == 0
    assert detect_gpus(tmp_path / "missing").count == 0


def test_this_machines_gpus_match_its_device_nodes():
    nodes = sorted(n for n in os.listdir("/dev") if n.startswith("nvidia") and n[6:].isdigit())
    assert host_gpus().count == len(nodes)


def test_gpu_models_and_engine_support_parse():
    assert parse_smi_listing("garbage\n" + SMI) == ("NVIDIA H100 80GB HBM3",) * 2
    assert gpu_type_matches("H100", "NVIDIA H100 80GB HBM3") and gpu_type_matches("h100-80gb", "NVIDIA H100 80GB HBM3")
    assert not gpu_type_matches("A100", "NVIDIA H100 80GB HBM3") and not gpu_type_matches("", "NVIDIA H100")
    assert engine_gpu_support({"Runtimes": {"runc": {}, "nvidia": {"path": "nvidia-container-runtime"}}})
    assert engine_gpu_support({"Runtimes": {"runc": {}}, "DiscoveredDevices": [{"Source": "cdi", "ID": "nvidia.com/gpu=0"}]})
    assert not engine_gpu_support({"Runtimes": {"runc": {}, "crun": {}}})


def test_docker_asks_the_engine_for_the_tasks_gpus():
    pytest.importorskip("docker")
    from autoenvscaling.sandbox.docker_backend import DockerBackend

    backend = DockerBackend(policy=SandboxPolicy())
    prepared = PreparedEnvironment(backend="docker", ref="sha256:0")
    [request] = backend.container_settings(toy_task(gpus=2), prepared)["device_requests"]
    assert request["Count"] == 2 and request["Capabilities"] == [["gpu"]]
    assert "device_requests" not in backend.container_settings(toy_task(), prepared)
    # a gpu_optional task asks only for the GPUs the engine can hand out here (none on this machine)
    optional = backend.container_settings(toy_task(gpus=2, gpu_optional=True), prepared)
    if not host_gpus().count:
        assert "device_requests" not in optional


class _DomainGate(Gate):
    order = 15

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        return self.result("pass", f"{self.name} judged a task of domain {task.provenance.domain}")


class AlphaGate(_DomainGate):
    name = "alpha-rule"
    domain = "alpha"


class BetaGate(_DomainGate):
    name = "beta-rule"
    domain = "beta"


class _TwoDomains:
    @hookimpl
    def autoenvscaling_register_gates(self, registrar):
        registrar.add("alpha-rule", AlphaGate)
        registrar.add("beta-rule", BetaGate)


def test_a_domains_gates_judge_only_that_domains_tasks(aes_host, aes_register):
    from autoenvscaling.gates.validate import Validator

    aes_register(_TwoDomains(), name="two-domains")
    sandbox_gates = ("build", "oracle", "null", "redteam", "reset", "flaky")
    validator = Validator(host=aes_host, settings=GateSettings(skip=sandbox_gates))
    base = ToyDomain().generate("write-file", seed=3)
    for domain, other in (("alpha", "beta"), ("beta", "alpha")):
        report = asyncio.run(validator.validate(base.with_provenance(domain=domain)))
        gates = {g.name: g for g in report.gates}
        assert report.status == "valid", report.reason
        assert (gates[f"{domain}-rule"].status, gates[f"{domain}-rule"].reason) == (
            "pass", f"{domain}-rule judged a task of domain {domain}")
        assert gates[f"{other}-rule"].status == "skip"
        assert gates[f"{other}-rule"].reason == f"a gate of domain {other}; this task's domain is {domain}"
    neither = asyncio.run(validator.validate(base))  # domain "toy": neither gate applies
    assert [g.status for g in neither.gates if g.name.endswith("-rule")] == ["skip", "skip"]


def _builtin_host():
    from autoenvscaling.plugins.host import PluginHost

    host = PluginHost(strict=True)
    host.load_builtins()
    host.check()
    return host


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from autoenvscaling.cli.main import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "AUTOENVSCALING_LOAD_PLUGINS": ""})

"""The Ray executor on a real local Ray instance (one per module): the same job specs as Ray tasks,
a worker killed mid-job retried by Ray, and the same admitted suite as the local executor."""

from __future__ import annotations

import asyncio
import os
import tomllib
from pathlib import Path

import aes_pid_plugin as pidp
import pytest
from click.testing import CliRunner

from autoenvscaling.executors.jobs import AgentSpec, AttemptJob, JobResult, TaskRef, WorkerSetup
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.gates.validate import ValidateJob

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'autoenvscaling[ray]'; CI installs it)")


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory: pytest.TempPathFactory):
    """One local Ray instance for the module. Ray writes an auth token under HOME: give it its own. Its
    workers get this test folder on their path (the pid-file plugin), as cluster workers would have
    the plugins installed."""
    saved = {k: os.environ.get(k) for k in ("HOME", "RAY_AUTH_MODE")}
    os.environ["HOME"] = str(tmp_path_factory.mktemp("ray-home"))
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"AUTOENVSCALING_CACHE": os.environ["AUTOENVSCALING_CACHE"], "OMP_NUM_THREADS": "1",
                                       "PYTHONPATH": str(Path(pidp.__file__).parent)}})
    try:
        yield
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run(jobs: list, **kw) -> list[JobResult]:
    from autoenvscaling.executors.ray_executor import RayExecutor

    executor = RayExecutor(**kw)

    async def go() -> list[JobResult]:
        try:
            return [r async for r in executor.map(jobs)]
        finally:
            await executor.aclose()

    return asyncio.run(go())


def test_job_specs_run_as_ray_tasks(ray_instance, pid_host, bwrap, tmp_path: Path) -> None:
    setup = WorkerSetup.of(pid_host, bwrap)
    folder = tmp_path / "ray"
    task = pidp.pid_task(folder)
    (folder / "go").touch()
    jobs = [ValidateJob(key="good", setup=setup, task=TaskRef.at(pidp.DEFECTS / "good"), label="good",
                        settings=GateSettings(flaky_runs=1)),
            AttemptJob(key="pid", setup=setup, task=TaskRef.inline(task), agent=AgentSpec(name="pidfile")),
            AttemptJob(key="bad", setup=setup, task=TaskRef.inline(task), agent=AgentSpec(name="nope"))]
    results = {r.key: r for r in _run(jobs)}
    assert results["good"].ok and results["good"].value.status == "valid", results["good"]
    assert results["pid"].ok and results["pid"].value.status == "ok"
    assert pidp.wait_for_pid(folder, timeout=1) != os.getpid()  # it ran in a Ray worker
    assert not results["bad"].ok and "nope" in results["bad"].error and "\n" not in results["bad"].error
    assert ray.is_initialized()  # an executor that found Ray running leaves it running


def test_a_ray_worker_killed_mid_job_is_retried_once(ray_instance, pid_host, bwrap, tmp_path: Path) -> None:
    from autoenvscaling.executors.ray_executor import RayExecutor

    folder = tmp_path / "victim"
    job = AttemptJob(key="victim", setup=WorkerSetup.of(pid_host, bwrap), task=TaskRef.inline(pidp.pid_task(folder)),
                     agent=AgentSpec(name="pidfile"))
    executor = RayExecutor(concurrency=1, max_retries=2)

    async def go() -> list[JobResult]:
        async def results() -> list[JobResult]:
            return [r async for r in executor.map([job])]

        batch = asyncio.ensure_future(results())
        first = await asyncio.to_thread(pidp.wait_for_pid, folder)
        pidp.kill(first)
        second = await asyncio.to_thread(pidp.wait_for_pid, folder, exclude={first})
        (folder / "go").touch()
        assert second != first
        return await batch

    (result,) = asyncio.run(go())
    assert result.ok and result.value.status == "ok"
    assert len(list(folder.glob("pid-*"))) == 2


def test_a_ray_job_that_hangs_is_stopped_at_the_time_limit(ray_instance) -> None:
    from autoenvscaling.executors.ray_executor import RayExecutor

    executor = RayExecutor(concurrency=1, max_retries=0)

    async def go() -> tuple[JobResult, JobResult]:
        try:
            executor.job_time_limit = None  # a Ray worker may take a while to start: no limit to race
            (warm,) = [r async for r in executor.map([pidp.HangJob(key="warm", setup=WorkerSetup(), hang=False)])]
            executor.job_time_limit = 3.0
            (hung,) = [r async for r in executor.map([pidp.HangJob(key="hung", setup=WorkerSetup())])]
            return warm, hung
        finally:
            await executor.aclose()

    warm, hung = asyncio.run(go())
    assert warm.ok and not hung.ok and "ran past the executor's time limit of 3 s" in (hung.error or "")


def _digests(suite: Path) -> list[tuple[str, str]]:
    data = tomllib.loads((suite / "dataset.toml").read_text())
    return sorted((t["name"], t["digest"]) for t in data["tasks"])


def _generate(out: Path, executor) -> list[tuple[str, str]]:  # noqa: ANN001
    from autoenvscaling.flywheel.loop import Flywheel, FlywheelConfig
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.bwrap import BwrapBackend

    # generate's settings, minus the reset and flakiness reruns of the oracle (they decide nothing here).
    config = FlywheelConfig(seed=7, rounds=1, mix={"terminal": 1.0}, difficulty="mixed", calibrate=False, review=False,
                            target=3, settings=GateSettings(skip=("reset", "flaky")))
    flywheel = Flywheel(config, out, host=create_host(), backend=BwrapBackend(), executor=executor)

    async def go() -> None:
        try:
            await flywheel.generate()
        finally:
            await executor.aclose()

    try:
        asyncio.run(go())
    finally:
        flywheel.close()
    return _digests(out)


@pytest.mark.slow  # ~190 s; the fast set keeps the Ray job and retry tests (CI stays under 30 minutes)
def test_the_same_seed_admits_the_same_suite_on_local_workers_and_ray(ray_instance, tmp_path: Path) -> None:
    """Two worker processes and two Ray tasks admit the same suite (one worker too: the slow test
    below runs all three from the command line)."""
    from autoenvscaling.executors.base import LocalExecutor
    from autoenvscaling.executors.ray_executor import RayExecutor

    pytest.importorskip("autoenvscaling_terminal", reason="the terminal plugin is not installed")
    two = _generate(tmp_path / "jobs2", LocalExecutor(concurrency=2))
    on_ray = _generate(tmp_path / "ray", RayExecutor(concurrency=2))
    assert len(two) == 3
    assert two == on_ray


@pytest.mark.slow
def test_generate_on_the_command_line_admits_the_same_suite_with_every_executor(ray_instance, tmp_path: Path) -> None:
    from autoenvscaling.cli.main import cli

    pytest.importorskip("autoenvscaling_terminal", reason="the terminal plugin is not installed")
    suites = {}
    for label, extra in (("jobs1", ["--jobs", "1"]), ("jobs2", ["--jobs", "2"]), ("ray", ["--executor", "ray"])):
        out = tmp_path / label
        done = CliRunner().invoke(cli, ["generate", "--mix", "terminal=1", "-n", "3", "--seed", "7", "--out", str(out),
                                        "--json", *extra], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        suites[label] = _digests(out)
    assert len(suites["jobs1"]) == 3
    assert suites["jobs1"] == suites["jobs2"] == suites["ray"]

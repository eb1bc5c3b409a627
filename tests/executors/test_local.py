"""The local executor: jobs are plain data that survive JSON, run in worker processes with their own
plugin host, come back in completion order, and survive a worker killed mid-job."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import aes_pid_plugin as pidp
import pytest

from autoenvscaling.errors import UsageError
from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.executors.jobs import AgentSpec, AttemptJob, JobResult, LLMSpec, SolverSpec, TaskRef, WorkerSetup
from autoenvscaling.flywheel.assignments import Assignment
from autoenvscaling.flywheel.jobs import ProposeJob
from autoenvscaling.gates.base import GateSettings, ValidationReport
from autoenvscaling.gates.validate import ValidateJob
from autoenvscaling.plugins import create_host, hookimpl
from autoenvscaling.runtime.trial import TrialResult


def _collect(executor: LocalExecutor, jobs: list) -> list[JobResult]:
    async def go() -> list[JobResult]:
        try:
            return [r async for r in executor.map(jobs)]
        finally:
            await executor.aclose()

    return asyncio.run(go())


def test_every_job_kind_round_trips_through_json(pid_host, bwrap, tmp_path: Path) -> None:
    setup = WorkerSetup.of(pid_host, bwrap)
    task = pidp.pid_task(tmp_path)
    binary = task.model_copy(update={"files": {**task.files, "environment/blob.bin": task.files["tests/test.sh"].model_copy(
        update={"data": bytes(range(256))})}})
    jobs = [
        ValidateJob(key="v", setup=setup, task=TaskRef.at(pidp.DEFECTS / "good"), label="good",
                    settings=GateSettings(flaky_runs=1), suite=(TaskRef.inline(binary),)),
        AttemptJob(key="a", setup=setup, task=TaskRef.inline(binary),
                   agent=AgentSpec(name="solver", solver=SolverSpec(llm=LLMSpec(model="m", base_url="http://127.0.0.1:1"))),
                   seed=7),
        ProposeJob(key="p", setup=setup, proposer="procedural", domain="toy", seed=3, round=0, slot=1,
                   assignment=Assignment(domain="toy", direction="new", seed=3, text="x"), gates=("lint",)),
    ]
    for job in jobs:  # each kind is its own model, next to what it runs
        back = type(job).model_validate_json(job.model_dump_json())
        assert back == job
    assert AttemptJob.model_validate_json(jobs[1].model_dump_json()).task.load().files["environment/blob.bin"].data \
        == bytes(range(256))
    assert [r.module for r in setup.plugins] == ["aes_pid_plugin"]
    assert (setup.backend, setup.policy) == ("bwrap", bwrap.policy)


def test_jobs_run_in_worker_processes_and_a_failing_job_is_one_error_line(pid_host, bwrap, tmp_path: Path) -> None:
    setup = WorkerSetup.of(pid_host, bwrap)
    task = pidp.pid_task(tmp_path / "run")
    (tmp_path / "run" / "go").touch()
    jobs = [AttemptJob(key="pid", setup=setup, task=TaskRef.inline(task), agent=AgentSpec(name="pidfile")),
            AttemptJob(key="unknown", setup=setup, task=TaskRef.inline(task), agent=AgentSpec(name="no-such-agent")),
            ValidateJob(key="lint", setup=setup, task=TaskRef.at(pidp.DEFECTS / "missing-test-sh"), label="m",
                        gates=("lint",))]
    results = {r.key: r for r in _collect(LocalExecutor(concurrency=2), jobs)}
    assert set(results) == {"pid", "unknown", "lint"}
    attempt = results["pid"].value
    assert isinstance(attempt, TrialResult) and attempt.status == "ok" and attempt.reward == 0.0
    worker_pid = pidp.wait_for_pid(tmp_path / "run", timeout=1)
    import os

    assert worker_pid != os.getpid()  # the agent ran in a worker process, not here
    bad = results["unknown"]
    assert not bad.ok and bad.value is None and "\n" not in bad.error and "no-such-agent" in bad.error
    assert "Traceback" in (bad.details or "")
    report = results["lint"].value
    assert isinstance(report, ValidationReport) and (report.status, report.reason) == ("invalid", "lint: missing tests/test.sh")


def test_a_worker_killed_mid_job_is_replaced_and_the_job_runs_again(pid_host, bwrap, tmp_path: Path) -> None:
    setup = WorkerSetup.of(pid_host, bwrap)
    folder = tmp_path / "kill"
    job = AttemptJob(key="victim", setup=setup, task=TaskRef.inline(pidp.pid_task(folder)), agent=AgentSpec(name="pidfile"))
    executor = LocalExecutor(concurrency=1, max_retries=2)

    async def go() -> list[JobResult]:
        batch = asyncio.ensure_future(_results(executor, [job]))
        first = await asyncio.to_thread(pidp.wait_for_pid, folder)
        pidp.kill(first)
        second = await asyncio.to_thread(pidp.wait_for_pid, folder, exclude={first})
        (folder / "go").touch()
        results = await batch
        assert second != first
        return results

    (result,) = asyncio.run(go())
    assert result.ok and result.retries == 1 and isinstance(result.value, TrialResult) and result.value.status == "ok"
    assert len(list(folder.glob("pid-*"))) == 2  # once on the killed worker, once on its replacement


def test_a_job_whose_workers_keep_dying_is_an_error_naming_the_signal(pid_host, bwrap, tmp_path: Path) -> None:
    setup = WorkerSetup.of(pid_host, bwrap)
    folder, other = tmp_path / "doomed", tmp_path / "fine"
    doomed = AttemptJob(key="doomed", setup=setup, task=TaskRef.inline(pidp.pid_task(folder)), agent=AgentSpec(name="pidfile"))
    fine = AttemptJob(key="fine", setup=setup, task=TaskRef.inline(pidp.pid_task(other)), agent=AgentSpec(name="pidfile"))
    (other / "go").touch()
    executor = LocalExecutor(concurrency=2, max_retries=1)

    async def go() -> list[JobResult]:
        batch = asyncio.ensure_future(_results(executor, [doomed, fine]))
        seen: set[int] = set()
        for _ in range(2):  # the first try and its one retry
            pid = await asyncio.to_thread(pidp.wait_for_pid, folder, exclude=seen)
            seen.add(pid)
            pidp.kill(pid)
        return await batch

    results = {r.key: r for r in asyncio.run(go())}
    assert results["fine"].ok
    assert results["doomed"].error == "worker process killed by SIGKILL (2 attempt(s))"
    assert results["doomed"].retries == 1


class _ObjectPlugin:
    @hookimpl
    def autoenvscaling_register_agents(self, registrar):  # noqa: ANN001
        registrar.add("object-agent", pidp.PidfileAgent)


def test_an_object_plugin_that_registers_things_cannot_travel_to_workers() -> None:
    host = create_host(strict=True, entrypoints=False, plugins=[_ObjectPlugin()])
    with pytest.raises(UsageError, match="in-process object, so worker processes cannot load it") as err:
        WorkerSetup.of(host)
    assert "in_process=True" in (err.value.hint or "")


def test_in_process_mode_runs_the_same_jobs_in_this_process(pid_host, bwrap, tmp_path: Path) -> None:
    import os

    folder = tmp_path / "here"
    job = AttemptJob(key="x", setup=WorkerSetup.of(pid_host, bwrap), task=TaskRef.inline(pidp.pid_task(folder)),
                     agent=AgentSpec(name="pidfile"))
    (folder / "go").touch()
    (result,) = _collect(LocalExecutor(in_process=True), [job])
    assert result.ok and result.value.status == "ok"
    assert pidp.wait_for_pid(folder, timeout=1) == os.getpid()


def test_an_object_plugins_agent_runs_in_process_and_its_setup_fails_in_a_worker_process(bwrap, tmp_path: Path) -> None:
    host = create_host(strict=True, entrypoints=False, plugins=[_ObjectPlugin()])
    setup = WorkerSetup.of(host, bwrap, in_process=True)
    folder = tmp_path / "here"
    job = AttemptJob(key="x", setup=setup, task=TaskRef.inline(pidp.pid_task(folder)), agent=AgentSpec(name="object-agent"))
    (folder / "go").touch()
    (result,) = _collect(LocalExecutor(in_process=True), [job])
    assert result.ok and result.value.status == "ok"
    # The same setup in a worker process names a host that is not there: an error result, one line.
    (result,) = _collect(LocalExecutor(concurrency=1), [job])
    assert not result.ok and "names the plugin host of an in-process executor" in (result.error or "")


def test_a_job_that_hangs_is_stopped_at_the_time_limit_and_its_worker_replaced() -> None:
    """A hung job (a plugin hook in an endless loop) ends as an error result naming the limit; its
    worker is killed, and the next job runs on a fresh one. Without the limit it would never end."""
    setup = WorkerSetup()

    async def go() -> tuple[JobResult, JobResult, JobResult]:
        executor = LocalExecutor(concurrency=1, max_retries=0)
        try:
            executor.job_time_limit = None  # the warm-up may be slow on a loaded machine: no limit to race
            first = await executor.submit(pidp.HangJob(key="warm", setup=setup, hang=False))
            executor.job_time_limit = 2.0
            hung = await executor.submit(pidp.HangJob(key="hung", setup=setup))
            executor.job_time_limit = None
            after = await executor.submit(pidp.HangJob(key="after", setup=setup, hang=False))
            return first, hung, after
        finally:
            await executor.aclose()

    first, hung, after = asyncio.run(go())
    assert first.ok and after.ok and after.value.pid != first.value.pid
    assert not hung.ok and "ran past the executor's time limit of 2 s" in (hung.error or "")
    assert "AUTOENVSCALING_JOB_TIME_LIMIT" in (hung.error or "")
    with pytest.raises(ProcessLookupError):
        os.kill(first.value.pid, 0)  # the hung worker is gone


def test_in_process_a_job_that_awaits_forever_is_stopped_at_the_time_limit() -> None:
    async def go() -> JobResult:
        executor = LocalExecutor(in_process=True)
        executor.job_time_limit = 0.5
        try:
            return await executor.submit(pidp.HangJob(key="hung", setup=WorkerSetup(), blocking=False))
        finally:
            await executor.aclose()

    result = asyncio.run(go())
    assert not result.ok and "time limit of 0.5 s" in (result.error or "")


def test_the_job_time_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LocalExecutor().job_time_limit == 4 * 3600
    monkeypatch.setenv("AUTOENVSCALING_JOB_TIME_LIMIT", "90")
    assert LocalExecutor().job_time_limit == 90
    monkeypatch.setenv("AUTOENVSCALING_JOB_TIME_LIMIT", "0")
    assert LocalExecutor().job_time_limit is None
    monkeypatch.setenv("AUTOENVSCALING_JOB_TIME_LIMIT", "soon")
    with pytest.raises(UsageError, match="not a number of seconds") as err:
        LocalExecutor()
    assert "AUTOENVSCALING_JOB_TIME_LIMIT=7200" in (err.value.hint or "")


def test_jobs_default_to_the_cores_this_process_may_use() -> None:
    import subprocess
    import sys

    from autoenvscaling.executors.sizing import default_jobs

    assert 1 <= default_jobs() <= len(os.sched_getaffinity(0))
    one_core = ("import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
                "from autoenvscaling.executors.sizing import default_jobs; print(default_jobs())")
    assert subprocess.run([sys.executable, "-c", one_core], capture_output=True, text=True, check=True).stdout == "1\n"


def test_the_local_executor_takes_no_address() -> None:
    with pytest.raises(UsageError, match="takes no address") as err:
        LocalExecutor(address="ray://head:10001")
    assert "--executor ray" in (err.value.hint or "")


async def _results(executor: LocalExecutor, jobs: list) -> list[JobResult]:
    try:
        return [r async for r in executor.map(jobs)]
    finally:
        await executor.aclose()


DRIVER = """
import asyncio, sys
sys.path.insert(0, sys.argv[2])
import aes_pid_plugin as pidp
from pathlib import Path
from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.executors.jobs import AgentSpec, AttemptJob, TaskRef, WorkerSetup
from autoenvscaling.plugins import create_host
from autoenvscaling.sandbox.bwrap import BwrapBackend

host = create_host(strict=True, entrypoints=False, plugins=[pidp])
job = AttemptJob(key="k", setup=WorkerSetup.of(host, BwrapBackend()), task=TaskRef.inline(pidp.pid_task(Path(sys.argv[1]))),
                 agent=AgentSpec(name="pidfile"))

async def main():
    async for _ in LocalExecutor(concurrency=1).map([job]):
        pass

asyncio.run(main())
"""


def test_workers_die_with_a_driver_killed_by_sigkill(bwrap, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    import time

    folder = tmp_path / "orphan"
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(folder), str(Path(pidp.__file__).parent)])
    try:
        worker = pidp.wait_for_pid(folder, timeout=60)
    finally:
        pidp.kill(driver.pid)
        driver.wait()
    deadline = time.monotonic() + 60  # killed at once by the kernel; reaped when a loaded machine gets to it
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pidp.kill(worker)
    raise AssertionError(f"worker {worker} outlived its driver")

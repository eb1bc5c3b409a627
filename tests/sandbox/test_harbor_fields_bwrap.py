"""Harbor task.toml fields honoured in real bwrap trials: the network mode the policy grants,
[environment.healthcheck], [solution] env, and artifacts collected into the result (a planted link
to a host path brings nothing back)."""

from __future__ import annotations

import asyncio
import io
import tarfile
from typing import Any

import pytest

from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.runtime.artifacts import ARTIFACTS_LIMIT, write_artifacts
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.base import SandboxPolicy

from .conftest import make_task

DOCKERFILE = "FROM ubuntu:24.04\nWORKDIR /app\n"
PASS = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"
FILE_IS = "#!/bin/bash\n[ \"$(cat /app/out.txt 2>/dev/null)\" = {want} ] && echo 1 > /logs/verifier/reward.txt " \
          "|| echo 0 > /logs/verifier/reward.txt\n"


def _task(solve: str = "true", test: str = PASS, environment: dict[str, Any] | None = None, **config: Any):
    files = {"solution/solve.sh": f"#!/bin/bash\n{solve}\n", "tests/test.sh": test}
    return make_task(DOCKERFILE, files, environment=environment, name="harbor-fields", **config)


def _run(backend, task, agent=None):
    return asyncio.run(TrialRunner(backend, runtimes=[], artifacts_limit=ARTIFACTS_LIMIT).run(task, agent or OracleAgent()))


@pytest.fixture(scope="module")
def online(bwrap_cls):
    """A backend whose policy grants the internet to tasks that ask for it."""
    return bwrap_cls(policy=SandboxPolicy(network="task"))


# What the solution sees of the network: any interface but loopback means the host's network.
INTERFACES = "awk 'NR>2 && $1 != \"lo:\" {n++} END {print n+0}' /proc/net/dev > /app/out.txt"


@pytest.mark.parametrize("environment, agent, online_expected", [
    ({"allow_internet": True}, {}, True),  # the positive control: the policy grants what is asked
    ({"network_mode": "public"}, {}, True),
    ({"network_mode": "no-network", "allow_internet": True}, {}, False),  # never granted, even if allowed
    ({"network_mode": "allowlist", "allowed_hosts": ["pypi.org"]}, {}, False),  # not enforced: offline
    ({"network_mode": "public"}, {"network_mode": "no-network"}, False),  # a phase's override narrows it
    ({}, {}, False),
])
def test_network_mode_decides_what_the_policy_grants(online, environment, agent, online_expected):
    task = _task(INTERFACES, "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n", environment, agent=agent)
    assert online.policy.network_for(task) is online_expected
    async def go():
        sandbox = await online.create(task, await online.prepare(task))
        async with sandbox:
            return (await sandbox.exec("awk 'NR>2 && $1 != \"lo:\" {n++} END {print n+0}' /proc/net/dev")).stdout

    assert (int(asyncio.run(go()).strip()) > 0) is online_expected


def test_a_passing_environment_healthcheck_lets_the_trial_run(backend):
    task = _task("echo ok > /app/out.txt", FILE_IS.format(want="ok"),
                 {"healthcheck": {"command": "test -f /app/ready || touch /app/ready && test -f /app/ready",
                                  "interval_sec": 0.1, "retries": 2}})
    result = _run(backend, task)
    assert result.status == "ok" and result.reward == 1.0, result.error


def test_a_failing_environment_healthcheck_is_a_trial_error_not_a_score(backend):
    task = _task("echo ok > /app/out.txt", PASS,
                 {"healthcheck": {"command": "echo not ready >&2; exit 3", "interval_sec": 0.05, "retries": 2}})
    result = _run(backend, task)
    assert result.status == "error" and not result.rewards and not result.steps
    assert "[environment.healthcheck] failed 2 times" in result.error and "exit 3" in result.error


def test_the_healthcheck_start_period_does_not_count_failures(backend):
    """It fails until a file appears (the third attempt makes it); retries=1 alone would fail at once."""
    check = "n=$(cat /tmp/n 2>/dev/null || echo 0); echo $((n+1)) > /tmp/n; [ $n -ge 2 ]"
    task = _task("true", PASS, {"healthcheck": {"command": check, "retries": 1, "start_period_sec": 30,
                                                "start_interval_sec": 0.05}})
    assert _run(backend, task).status == "ok"
    task = _task("true", PASS, {"healthcheck": {"command": check, "retries": 1, "interval_sec": 0.05}})
    assert _run(backend, task).status == "error"  # the control: without a start period the first failure counts


def test_the_oracle_runs_solve_sh_with_the_solution_env(backend):
    task = _task('echo "$GREETING" > /app/out.txt', FILE_IS.format(want="hello"),
                 solution={"env": {"GREETING": "hello"}})
    assert _run(backend, task).reward == 1.0
    assert _run(backend, _task('echo "$GREETING" > /app/out.txt', FILE_IS.format(want="hello"))).reward == 0.0


def test_a_table_min_reward_stops_at_a_key_below_it(backend):
    steps = [{"name": "one", "min_reward": {"reward": 1.0}}, {"name": "two"}]
    files = {"steps/one/solution/solve.sh": "#!/bin/bash\ntrue\n", "steps/two/solution/solve.sh": "#!/bin/bash\ntrue\n",
             "steps/one/tests/test.sh": "#!/bin/bash\necho 0.5 > /logs/verifier/reward.txt\n",
             "steps/two/tests/test.sh": PASS}
    task = make_task(DOCKERFILE, files, name="harbor-steps", steps=steps)
    result = _run(backend, task)
    assert [s.name for s in result.steps] == ["one"] and result.rewards == {"one": 0.5, "two": 0.0}


def test_artifacts_are_collected_into_the_result(backend, tmp_path):
    solve = "mkdir -p /app/out/sub && echo report > /app/out/report.txt && echo deep > /app/out/sub/x.log " \
            "&& echo skip > /app/out/sub/y.tmp && echo one > /app/single.txt"
    task = _task(solve, PASS, artifacts=["/app/out", {"source": "single.txt", "destination": "renamed.txt"},
                                         {"source": "/app/out", "destination": "filtered", "exclude": ["*.tmp"]},
                                         "/app/missing", {"source": "/data", "service": "db"}])
    result = _run(backend, task)
    assert result.status == "ok", result.error
    got = {a.path: a.data for a in result.artifacts if a.data is not None}
    assert got == {"app/out/report.txt": b"report\n", "app/out/sub/x.log": b"deep\n", "app/out/sub/y.tmp": b"skip\n",
                   "renamed.txt": b"one\n", "filtered/report.txt": b"report\n", "filtered/sub/x.log": b"deep\n"}
    skipped = {a.path: a.skipped for a in result.artifacts if a.skipped}
    assert skipped["app/missing"] == "missing" and "service 'db'" in skipped["data"]
    back = type(result).model_validate_json(result.model_dump_json())  # JSON-safe (base64)
    assert back.artifacts == result.artifacts
    manifest = write_artifacts(result.artifacts, tmp_path / "artifacts")
    assert (tmp_path / "artifacts" / "app/out/sub/x.log").read_bytes() == b"deep\n" and manifest.is_file()


def test_a_step_collects_its_own_and_the_tasks_artifacts(backend):
    steps = [{"name": "one", "artifacts": ["/app/one.txt"]}]
    files = {"steps/one/solution/solve.sh": "#!/bin/bash\necho 1 > /app/one.txt; echo t > /app/top.txt\n",
             "steps/one/tests/test.sh": PASS}
    task = make_task(DOCKERFILE, files, name="harbor-steps", steps=steps, artifacts=["/app/top.txt"])
    result = _run(backend, task)
    assert {a.path: a.data for a in result.artifacts} == {"steps/one/app/top.txt": b"t\n",
                                                           "steps/one/app/one.txt": b"1\n"}


def test_a_planted_link_to_a_host_path_brings_nothing_back(backend, tmp_path):
    """The attack: the agent links the artifact paths to a host file (and to /). The positive control:
    the backend's archive does carry those links to the host path, yet nothing of the host file (nor
    any link) reaches the result or the folder it is written to."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-SECRET\n")
    solve = (f"mkdir -p /app/out && echo real > /app/out/real.txt && ln -s {secret} /app/out/leak "
             f"&& ln -s / /app/out/root && ln -s {secret} /app/link.txt")
    task = _task(solve, PASS, artifacts=["/app/out", "/app/link.txt"])

    async def go():
        runner = TrialRunner(backend, runtimes=[])
        result = await runner.run(task, OracleAgent(), artifacts_limit=ARTIFACTS_LIMIT)
        # the control: the same links, read straight from a sandbox, are links to the host path
        sandbox = await backend.create(task, await backend.prepare(task))
        async with sandbox:
            await sandbox.exec(f"bash -c '{solve}'")
            raw = await sandbox.get_archive("/app/out")
        return result, raw

    result, raw = asyncio.run(go())
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        links = {m.name: m.linkname for m in tar if m.issym()}
    assert links == {"out/leak": str(secret), "out/root": "/"}
    assert result.status == "ok", result.error
    assert {a.path: a.data for a in result.artifacts if a.data is not None} == {"app/out/real.txt": b"real\n"}
    skipped = {a.path: a.skipped for a in result.artifacts if a.skipped}
    assert set(skipped) == {"app/out/leak", "app/out/root", "app/link.txt"}
    assert all("symbolic link" in why for why in skipped.values())
    assert not any(a.data and b"HOST-SECRET" in a.data for a in result.artifacts)
    folder = tmp_path / "written"
    write_artifacts(result.artifacts, folder)
    assert not any(p.is_symlink() for p in folder.rglob("*"))
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "app/out/real.txt", "manifest.json"]


def test_nop_collects_what_exists(backend):
    result = _run(backend, _task("true", PASS, artifacts=["/app/none"]), NopAgent())
    assert [a.skipped for a in result.artifacts] == ["missing"]


def test_artifacts_over_the_size_limit_are_skipped(backend):
    task = _task("head -c 100 /dev/zero > /app/big.bin && echo small > /app/small.txt", PASS,
                 artifacts=["/app/small.txt", "/app/big.bin"])
    result = asyncio.run(TrialRunner(backend, runtimes=[], artifacts_limit=50).run(task, OracleAgent()))
    assert {a.path: a.data for a in result.artifacts if a.data is not None} == {"app/small.txt": b"small\n"}
    big = next(a for a in result.artifacts if a.path == "app/big.bin")
    assert big.size == 100 and big.data is None and "over the artifacts size limit (44 bytes left)" in (big.skipped or "")
    off = asyncio.run(TrialRunner(backend, runtimes=[]).run(task, OracleAgent()))  # by default none are collected
    assert off.status == "ok" and off.artifacts == []


def test_tasks_run_writes_the_artifacts_where_asked(tmp_path):
    """`autoenvscaling tasks run --artifacts DIR`: each trial's artifacts and manifest under DIR."""
    import json

    from click.testing import CliRunner

    from autoenvscaling.cli.main import cli
    from autoenvscaling.tasks.harbor import write_task

    task = _task("mkdir -p /app/out && echo made > /app/out/made.txt", PASS, artifacts=["/app/out"])
    folder = write_task(task, tmp_path / "task")
    out = tmp_path / "artifacts"
    result = CliRunner().invoke(cli, ["tasks", "run", str(folder), "--json", "--jobs", "1", "--artifacts", str(out)])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)[0]
    assert row["reward"] == 1.0, row
    assert (out / "0000-task" / "manifest.json").is_file()
    assert (out / "0000-task" / "app/out/made.txt").read_text() == "made\n"
    assert row["artifacts"] == str((out / "0000-task" / "manifest.json").resolve())
    plain = CliRunner().invoke(cli, ["tasks", "run", str(folder), "--json", "--jobs", "1"])
    assert plain.exit_code == 0 and "artifacts" not in json.loads(plain.output)[0]

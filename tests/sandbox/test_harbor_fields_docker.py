"""The Harbor fields the trial runtime honours, on the docker backend: [environment.healthcheck]
(passing, and failing as a trial error), [solution] env, artifacts (a planted link brings nothing
back). The bwrap side, and the network modes: test_harbor_fields_bwrap.py."""

from __future__ import annotations

import asyncio

from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.runtime.artifacts import ARTIFACTS_LIMIT
from autoenvscaling.runtime.trial import TrialRunner

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures
from .conftest_docker import docker_task

DOCKERFILE = "FROM ubuntu:24.04\nWORKDIR /app\n"
CHECK = "#!/bin/bash\n[ \"$(cat /app/out/real.txt)\" = hello ] && echo 1 > /logs/verifier/reward.txt " \
        "|| echo 0 > /logs/verifier/reward.txt\n"


def test_healthcheck_solution_env_and_artifacts(docker_backend, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-SECRET\n")
    solve = f'mkdir -p /app/out && echo "$GREETING" > /app/out/real.txt && ln -s {secret} /app/out/leak'
    files = {"solution/solve.sh": f"#!/bin/bash\n{solve}\n", "tests/test.sh": CHECK}
    ok = docker_task(DOCKERFILE, files, {"healthcheck": {"command": "true"}}, name="harbor-fields",
                     solution={"env": {"GREETING": "hello"}}, artifacts=["/app/out", "/app/missing"])
    broken = docker_task(DOCKERFILE, files, {"healthcheck": {"command": "exit 4", "interval_sec": 0.05}},
                         name="harbor-fields")

    async def go():
        runner = TrialRunner(docker_backend, runtimes=[], artifacts_limit=ARTIFACTS_LIMIT)
        return await runner.run(ok, OracleAgent()), await runner.run(broken, OracleAgent())

    result, failed = asyncio.run(go())
    assert result.status == "ok" and result.reward == 1.0, result.error
    assert {a.path: a.data for a in result.artifacts if a.data is not None} == {"app/out/real.txt": b"hello\n"}
    assert {a.path: a.skipped for a in result.artifacts if a.skipped} == {"app/out/leak": "symbolic link: not followed",
                                                                          "app/missing": "missing"}
    assert failed.status == "error" and "[environment.healthcheck] failed 3 times (exit 4" in failed.error

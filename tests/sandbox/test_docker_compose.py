"""docker-compose tasks on the docker backend.

Reading a compose file (no engine needed): Harbor's overlay semantics (``main`` built from
environment/ unless the file says otherwise), its variables, start order, and one-line refusals of
what we cannot honour. Against a real engine: the fixture tasks score oracle 1 and nop 0 through the
trial runner and pass gates 1-6; sidecars are reached by service name, stay up between the agent's
commands, cannot reach the internet or the host's services; a sidecar that never becomes healthy (or
dies) fails the start in one line naming it; and closing the sandbox leaves nothing of the attempt."""

from __future__ import annotations

import asyncio
import http.server
import threading
import urllib.request

import pytest

from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.errors import BuildError, SandboxError, UnsupportedDockerfile
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.compose import load_compose
from autoenvscaling.sandbox.compose_spec import MAIN

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures
from .conftest_docker import FIXTURES, HostSecretHandler, docker_task

docker = pytest.mark.docker
pytest.importorskip("yaml")
MAIN_DOCKERFILE = "FROM debian:bookworm\nWORKDIR /app\n"


def compose_task(compose: str, files: dict | None = None, name: str = "compose-test", dockerfile: str | None = MAIN_DOCKERFILE):
    return docker_task(dockerfile, files={"environment/docker-compose.yaml": compose, **(files or {})}, name=name)


def fetch(url: str, timeout: float = 30) -> str:
    """A command printing what ``url`` serves (the timeout is for an answer that never comes, not a slow one)."""
    return (f"python3 -c \"import urllib.request; "
            f"print(urllib.request.urlopen('{url}', timeout={timeout:g}).read().decode().strip())\"")


# -- reading compose files ----------------------------------------------------------------------------
def test_harbor_overlay_main_is_built_from_environment_and_variables_resolve():
    spec = load_compose(compose_task("""
services:
  main:
    build:
      context: ${CONTEXT_DIR}
    image: ${MAIN_IMAGE_NAME}
    command: ["sh", "-c", "sleep infinity"]
    environment:
      - TEST_DIR=${TEST_DIR}
      - MODE=${MODE:-fast}
      - PRICE=$$5
    volumes:
      - ${HOST_VERIFIER_LOGS_PATH}:${ENV_VERIFIER_LOGS_PATH}
    depends_on: [cache]
    ports: ["8080:80"]
  cache:
    image: debian:bookworm
    command: sleep infinity
    environment:
      KEY: ${KEY}
""", files={"environment/.env": "KEY=from-dotenv\n"}))
    assert spec is not None and spec.order == ["cache", MAIN]
    main, cache = spec.main, spec.services["cache"]
    assert main.build is not None and main.build.context == "" and main.build.dockerfile == "Dockerfile"
    assert main.environment == {"TEST_DIR": "/tests", "MODE": "fast", "PRICE": "$5"}
    assert main.copies == [] and main.volumes == []  # Harbor's log mount is Harbor's business
    assert cache.image == "debian:bookworm" and cache.command == ["sleep", "infinity"]
    assert cache.environment == {"KEY": "from-dotenv"}  # environment/.env, never the host's environment
    assert any("published ports are ignored" in note for note in spec.notes)


def test_a_file_without_main_gets_harbors_main_and_waits_are_ordered():
    spec = load_compose(compose_task("""
services:
  web:
    build: ./web
    depends_on:
      db: {condition: service_healthy}
  db:
    build: {context: db, dockerfile: Dockerfile.db, args: {VERSION: "2"}}
    healthcheck: {test: "pg_isready", interval: 1m30s, timeout: 500ms, retries: 2, start_period: 2s}
  one-shot:
    image: debian:bookworm
    profiles: [debug]
""", files={"environment/web/Dockerfile": "FROM debian:bookworm\n", "environment/db/Dockerfile.db": "FROM debian:bookworm\n"}))
    assert spec.order == ["db", "web", MAIN] and "one-shot" not in spec.services
    db = spec.services["db"]
    assert db.build.context == "db" and db.build.dockerfile == "Dockerfile.db" and db.build.args == {"VERSION": "2"}
    assert db.healthcheck.test == ["/bin/sh", "-c", "pg_isready"]
    assert (db.healthcheck.interval, db.healthcheck.timeout, db.healthcheck.start_period) == (90.0, 0.5, 2.0)
    assert spec.services["web"].depends_on == {"db": "service_healthy"}
    assert spec.main.build is not None  # Harbor's base file builds main from environment/Dockerfile


@pytest.mark.parametrize("body, words", [
    ("  x:\n    image: debian:bookworm\n    privileged: true\n", "privileged"),
    ("  x:\n    image: debian:bookworm\n    network_mode: host\n", "network_mode"),
    ("  x:\n    image: debian:bookworm\n    volumes: [/etc:/host-etc]\n", "host path /etc"),
    ("  x:\n    image: debian:bookworm\n    cap_add: [SYS_ADMIN]\n", "SYS_ADMIN"),
    ("  x:\n    build: ../\n", "leaves environment/"),
    ("  main:\n    command: python3 -m http.server\n", "keep-alive"),
    ("  x:\n    image: debian:bookworm\nnetworks:\n  outside: {external: true}\n", "external"),
])
def test_what_cannot_be_honoured_is_refused_in_one_line_with_a_hint(body, words):
    with pytest.raises(UnsupportedDockerfile) as info:
        load_compose(compose_task("services:\n" + body))
    assert words in info.value.message and "\n" not in info.value.message
    assert info.value.hint


@pytest.mark.parametrize("body, words", [
    ("  a: {image: x, depends_on: [b]}\n  b: {image: x, depends_on: [a]}\n", "cycle: a -> b -> a"),
    ("  a: {image: x, depends_on: [nobody]}\n", "nobody, which is not defined"),
    ("  a: {image: x, healthcheck: {test: [CMD, 'true'], interval: soon}}\n", "not a duration"),
    ("  a:\n    image: x\n   bad-indent: 1\n", "not valid YAML"),
])
def test_malformed_files_are_build_errors(body, words):
    with pytest.raises(BuildError) as info:
        load_compose(compose_task("services:\n" + body))
    assert words in info.value.message


def test_sidecar_capabilities_stay_within_the_sandbox_set():
    pytest.importorskip("docker")
    from autoenvscaling.sandbox.docker_backend import CAPABILITIES, DockerBackend

    spec = load_compose(compose_task("services:\n  db:\n    image: x\n    cap_drop: [ALL]\n    cap_add: [CHOWN, SETUID]\n"
                                     "  web:\n    image: x\n    cap_drop: [NET_BIND_SERVICE]\n"))
    backend = DockerBackend()
    db, web = spec.services["db"], spec.services["web"]
    assert backend.hardening(docker_task(), add_caps=db.cap_add, drop_caps=db.cap_drop)["cap_add"] == ["CHOWN", "SETUID"]
    web_caps = backend.hardening(docker_task(), add_caps=web.cap_add, drop_caps=web.cap_drop)["cap_add"]
    assert set(web_caps) == set(CAPABILITIES) - {"NET_BIND_SERVICE"}
    assert backend.hardening(docker_task())["cap_drop"] == ["ALL"]


def test_tasks_without_a_compose_file_are_not_compose_tasks():
    assert load_compose(docker_task()) is None


# -- against the engine -------------------------------------------------------------------------------
@docker
@pytest.mark.parametrize("name", ["compose-sidecar-http", "compose-db-like"])
def test_fixtures_score_oracle_1_and_nop_0(docker_backend, docker_fixture_env, name):
    task, prepared = docker_fixture_env(name)
    runner = TrialRunner(docker_backend)

    async def go():
        return await runner.run(task, OracleAgent(), prepared=prepared), await runner.run(task, NopAgent(), prepared=prepared)

    oracle, nop = asyncio.run(go())
    assert oracle.status == "ok" and oracle.reward == 1.0, (oracle.error, oracle.steps and oracle.steps[-1].verifier.output_tail)
    assert nop.status == "ok" and nop.reward == 0.0, nop
    assert prepared.details.compose.order[-1] == MAIN


# Every gate, with -m slow: the three fixtures score oracle 1 and nop 0 in the fast set (above and in
# test_docker_entrypoint.py), and the gates' repeated oracle attempts add no line to that (checked with
# scripts/fast_set.py against a coverage run of the fast set).
@docker
@pytest.mark.slow
@pytest.mark.parametrize("name", ["compose-db-like", "compose-sidecar-http", "docker-entrypoint-service"])
def test_fixtures_pass_gates_1_to_6(docker_backend, name):
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator
    from autoenvscaling.plugins import create_host

    validator = Validator(host=create_host(), backend=docker_backend, settings=GateSettings(flaky_runs=2))
    report = asyncio.run(validator.validate(FIXTURES / name))
    gates = {g.name: g.status for g in report.gates}
    assert report.status == "valid", (report.task, report.reason)
    assert all(gates[name] == "pass" for name in ("lint", "build", "oracle", "null", "reset", "flaky")), gates


def _attempt_leftovers(client, attempt: str) -> list[str]:
    label = {"label": f"autoenvscaling.attempt={attempt}"}
    return ([c.name for c in client.containers.list(all=True, filters=label)]
            + [n.name for n in client.networks.list(filters=label)]
            + [v.name for v in client.volumes.list(filters=label)])


@docker
def test_sidecars_serve_by_name_outlive_commands_and_stay_offline(docker_backend, docker_fixture_env):
    task, prepared = docker_fixture_env("compose-db-like")
    rows = fetch("http://db:7000/rows")
    probe = ("import socket, sys\ntry:\n    socket.create_connection((sys.argv[1], 80), timeout=3); print('reached')\n"
             "except OSError as e:\n    print('blocked', type(e).__name__)\n")

    async def go():
        async with await docker_backend.create(task, prepared) as sb:
            first = await sb.exec(rows)
            await sb.exec("setsid sleep 300 & (setsid sleep 301 &); echo done")  # swept: main only
            await sb.exec("sleep 30", timeout=1)
            again = await sb.exec(rows)
            await sb.upload_files({"probe.py": probe.encode()}, "/probe")
            internet = await sb.exec("python3 /probe/probe.py deb.debian.org")
            db_internet = await docker_backend.call(
                docker_backend.client.api.exec_create, sb.group.containers["db"],
                ["python", "-c", "import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)"])
            db_out = await docker_backend.call(docker_backend.client.api.exec_start, db_internet["Id"])
            alive = {name: (await docker_backend.call(docker_backend.client.api.inspect_container, cid))["State"]["Running"]
                     for name, cid in sb.group.containers.items()}
            attempt = sb.group.attempt
            during = _attempt_leftovers(docker_backend.client, attempt)
        return first, again, internet, db_out.decode(), alive, attempt, during

    first, again, internet, db_out, alive, attempt, during = asyncio.run(go())
    assert first.ok and first.stdout.startswith("[{") and again.stdout == first.stdout  # the same db process
    assert alive == {"db": True, "api": True, MAIN: True}
    assert internet.stdout.startswith("blocked"), internet.stdout
    assert "unreachable" in db_out or "Error" in db_out, db_out
    assert len(during) == 5  # the control: three containers, the network and the volume carried the label
    assert _attempt_leftovers(docker_backend.client, attempt) == []  # close() removed all of it


@docker
def test_the_network_gateway_does_not_reach_the_hosts_services(docker_backend, docker_fixture_env):
    """A container on a bridge can reach the host through the gateway address; the host guard drops
    that (DNS excepted), and where it cannot be applied the protection says so."""
    from autoenvscaling.sandbox.compose_group import HostGuard

    task, prepared = docker_fixture_env("compose-sidecar-http")
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), HostSecretHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    # Where the guard applies, its dropped packets end the probe only by the timeout (so: a short one);
    # where it cannot, the probe must get the answer, however slow (so: a generous one).
    probe = fetch(f"http://$(cat /tmp/gateway):{port}/", timeout=30 if HostGuard.unavailable() else 2)
    try:
        async def go():
            async with await docker_backend.create(task, prepared) as sb:
                network = docker_backend.client.api.inspect_network(sb.group.network)
                gateway = network["IPAM"]["Config"][0]["Gateway"]
                assert urllib.request.urlopen(f"http://{gateway}:{port}", timeout=30).read() == b"host-secret"
                await sb.upload_files({"gateway": gateway.encode()}, "/tmp")
                return await sb.exec(probe + " 2>&1 | tail -1", timeout=120), await sb.exec(fetch("http://api:8080/health"))

        reached, dns = asyncio.run(go())
    finally:
        server.shutdown()
    guard = {p.name: p for p in docker_backend.protections()}["compose host guard"]
    assert dns.stdout.strip() == "ok"  # name resolution still works through the gateway
    if HostGuard.unavailable():
        assert not guard.active and "host-secret" in reached.stdout
    else:
        assert guard.active and "host-secret" not in reached.stdout, reached.stdout


UNHEALTHY = """
services:
  main:
    depends_on:
      flaky: {condition: service_healthy}
  flaky:
    image: debian:bookworm
    command: ["sleep", "infinity"]
    healthcheck:
      test: ["CMD-SHELL", "echo 'not ready: port 5432 closed'; exit 1"]
      interval: 200ms
      timeout: 1s
      retries: 2
"""
# main waits for crash to end: a service that dies right after it started is otherwise seen
# running or gone depending on how fast its shell ran (Docker's `compose up --wait` races the same).
DIES = """
services:
  main:
    depends_on:
      crash: {condition: service_completed_successfully}
  crash:
    image: debian:bookworm
    command: ["sh", "-c", "echo 'loading config'; echo 'crash: no such table orders' >&2; exit 4"]
"""


@docker
@pytest.mark.parametrize("compose, words", [
    (UNHEALTHY, ["compose service flaky did not become healthy within", "last health check: exit 1: not ready: port 5432 closed"]),
    (DIES, ["compose service crash exited with code 4 at start: crash: no such table orders"]),
])
def test_a_sidecar_that_is_not_healthy_fails_the_start_naming_it(docker_backend, compose, words):
    task = compose_task(compose, name="compose-broken")
    prepared = asyncio.run(docker_backend.prepare(task))

    async def go():
        sb = await docker_backend.create(task, prepared)
        with pytest.raises(SandboxError) as info:
            await sb.start()
        return info.value

    error = asyncio.run(go())
    assert "\n" not in error.message and all(w in error.message for w in words), error.message
    left = docker_backend.client.containers.list(all=True, filters={"label": "autoenvscaling.task=compose-broken"})
    assert left == [] and docker_backend.client.networks.list(filters={"label": "autoenvscaling.task=compose-broken"}) == []


@docker
def test_images_named_volumes_and_environment_files(docker_backend):
    """``image:`` resolves to a local base (``${MAIN_IMAGE_NAME}`` to the task's own image); a named
    volume is shared by two services; a file of environment/ mounted as ./path is copied in before
    the service starts."""
    task = compose_task("""
services:
  main:
    volumes:
      - shared:/shared
      - ./seed/data.txt:/opt/seed.txt:ro
  writer:
    image: debian:bookworm
    command: ["sh", "-c", "cat /seed/data.txt > /shared/from-writer; sleep infinity"]
    volumes:
      - type: volume
        source: shared
        target: /shared
      - ./seed:/seed
  worker:
    image: ${MAIN_IMAGE_NAME}
    command: ["sleep", "infinity"]
volumes:
  shared: {}
""", files={"environment/seed/data.txt": "seeded\n"}, name="compose-volumes")
    prepared = asyncio.run(docker_backend.prepare(task))

    async def go():
        async with await docker_backend.create(task, prepared) as sb:
            return await sb.exec("for i in $(seq 600); do [ -s /shared/from-writer ] && break; sleep 0.1; done; "
                                 "cat /shared/from-writer /opt/seed.txt")

    seen = asyncio.run(go())
    assert seen.stdout == "seeded\nseeded\n", seen
    assert prepared.details.compose.services["writer"].image == "debian:bookworm"
    assert prepared.details.compose.services["worker"].image_id == prepared.ref  # the task's own image
    assert any(m["image"] == "debian:bookworm" and m["base"] == "debian-bookworm" for m in prepared.details.base_mappings)


@docker
def test_refusals_reach_the_build_gate_as_build_errors(docker_backend):
    task = compose_task("services:\n  evil:\n    image: debian:bookworm\n    privileged: true\n", name="compose-evil")
    with pytest.raises(BuildError) as info:
        asyncio.run(docker_backend.prepare(task))
    assert "privileged" in info.value.message and "cap_add" in (info.value.hint or "")


@docker
def test_waiting_on_a_service_without_any_healthcheck_is_refused(docker_backend):
    task = compose_task("services:\n  main:\n    depends_on: {db: {condition: service_healthy}}\n"
                        "  db: {image: debian:bookworm, command: sleep infinity}\n", name="compose-nohealth")
    with pytest.raises(BuildError, match="db has no healthcheck"):
        asyncio.run(docker_backend.prepare(task))

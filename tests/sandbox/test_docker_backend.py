"""The docker backend against a real engine (podman's Docker-API service): commands, timeouts that
leave nothing behind, output caps, files in and out, the network, memory and pids limits, isolation
between attempts, image builds and their cache, and the one-line error when no engine answers."""

from __future__ import annotations

import asyncio
import os
import io
import tarfile
import time
import uuid

import pytest

from autoenvscaling.errors import BuildError, MissingPrerequisite
from autoenvscaling.sandbox.base import SandboxPolicy

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures
from .conftest_docker import TIGHT, docker_task
docker = pytest.mark.docker


def processes(sb):
    """The command lines of every process in the sandbox except pid 1 and the probe itself."""
    async def go():
        out = await sb.exec("for p in /proc/[0-9]*; do [ \"${p#/proc/}\" = 1 ] || [ \"${p#/proc/}\" = $$ ] || "
                            "tr '\\0' ' ' < $p/cmdline 2>/dev/null && echo; done", user="0")
        return [line for line in out.stdout.splitlines() if line.strip() and "/proc/[0-9]" not in line]
    return go()


@docker
def test_exec_output_exit_code_env_cwd_user_and_stdin(in_docker):
    async def go(sb):
        return (await sb.exec("echo out; echo err >&2; exit 3"),
                await sb.exec("pwd; echo $GREETING $EXTRA; id -u", env={"EXTRA": "world"}),
                await sb.exec("pwd", cwd="/tmp"),
                await sb.exec("id -un", user="nobody"),
                await sb.exec("tr a-z A-Z", stdin=b"piped in"),
                await sb.exec("cat; echo; id -un", stdin=b"as nobody", user="nobody"),
                await sb.exec("ls -A /tmp"),  # the stdin files are gone
                await sb.exec("echo $0; [[ 1 == 1 ]] && echo bash-syntax"))

    status, env, cwd, user, stdin, stdin_nobody, tmp, shell = in_docker(go)
    assert (status.exit_code, status.stdout, status.stderr, status.ok) == (3, "out\n", "err\n", False)
    assert env.stdout.split() == ["/app", "hello", "world", "0"]  # WORKDIR and ENV from the Dockerfile
    assert cwd.stdout.strip() == "/tmp"
    assert user.stdout.strip() == "nobody"
    assert stdin.stdout == "PIPED IN"
    assert stdin_nobody.stdout.split("\n")[:2] == ["as nobody", "nobody"]
    assert tmp.stdout == ""
    assert shell.stdout.split() == ["bash", "bash-syntax"]


@docker
def test_timeout_kills_everything_the_command_started(in_docker):
    async def go(sb):
        # Only the timeout can end it (sleep 303 outlasts the test); 5 s leave room for "started" when loaded.
        slow = await sb.exec("setsid sleep 301 & nohup sleep 302 >/dev/null 2>&1 & echo started; sleep 303", timeout=5)
        left = await processes(sb)
        alive = await sb.exec("echo still usable")
        return slow, left, alive

    slow, left, alive = in_docker(go)
    assert slow.timed_out and slow.exit_code is None and not slow.ok
    assert slow.stdout == "started\n"  # output printed before the timeout is kept
    assert not [p for p in left if "sleep" in p], left
    assert alive.ok and alive.stdout == "still usable\n"


@docker
def test_concurrent_commands_in_one_sandbox_take_turns(in_docker):
    """Each command's cleanup kills every other process, so commands in one sandbox must not overlap."""
    async def go(sb):
        return await asyncio.gather(sb.exec("sleep 0.5; echo first"), sb.exec("echo second"),
                                    sb.exec("sleep 0.2; echo third"))

    results = in_docker(go)
    assert [r.stdout for r in results] == ["first\n", "second\n", "third\n"]
    assert all(r.ok for r in results)


@docker
def test_a_cancelled_command_is_killed(in_docker):
    async def go(sb):
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(sb.exec("setsid sleep 304 & sleep 305", timeout=60), 1.0)
        return await processes(sb)

    left = in_docker(go)
    assert not [p for p in left if "sleep" in p], left


@docker
def test_output_is_capped(in_docker):
    async def go(sb):
        return (await sb.exec("head -c 300000 /dev/zero | tr '\\0' a; echo tail-marker >&2", output_limit=1000),
                await sb.exec("printf 12345", output_limit=1000))

    big, small = in_docker(go)
    assert big.truncated and len(big.stdout) + len(big.stderr) == 1000
    assert big.stdout == "a" * 1000 and big.exit_code == 0
    assert not small.truncated and small.stdout == "12345"


@docker
def test_upload_and_download(in_docker, tmp_path):
    blob = bytes(range(256)) * 40

    async def go(sb):
        await sb.upload_files({"pkg/run.sh": (b"#!/bin/sh\necho ran\n", True), "pkg/data.bin": (blob, False)},
                              "/deep/new/dir")
        ran = await sb.exec("/deep/new/dir/pkg/run.sh && stat -c %a /deep/new/dir/pkg/data.bin")
        local = tmp_path / "src"
        local.mkdir()
        (local / "one.txt").write_text("one")
        await sb.upload(local / "one.txt", "/up/one.txt")
        await sb.exec("mkdir -p /out/sub && echo made > /out/sub/f.txt && ln -s /etc/shadow /link")
        await sb.download("/out", tmp_path / "got")
        read = await sb.read_file("/deep/new/dir/pkg/data.bin")
        link = await sb.read_file("/link")  # a symlink is never followed
        with pytest.raises(FileNotFoundError):
            await sb.get_archive("/does/not/exist")
        return ran, read, link, await sb.read_file("/up/one.txt"), await sb.read_file("/nope")

    ran, read, link, one, missing = in_docker(go)
    assert ran.stdout.split() == ["ran", "644"]
    assert read == blob and one == b"one" and link is None and missing is None
    assert (tmp_path / "got" / "out" / "sub" / "f.txt").read_text() == "made\n"


def _exec_monitors(container_id: str) -> int:
    """podman's per-exec conmon processes of one container, from /proc."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                    cmdline = fh.read()
            except OSError:
                continue
            count += b"conmon" in cmdline.split(b"\0", 1)[0] and container_id.encode() in cmdline and b"\0-e\0" in cmdline
    return count


@docker
def test_a_closed_sandbox_leaves_no_exec_monitor_behind(docker_backend, docker_basic_task, docker_basic_env, monkeypatch):
    from autoenvscaling.sandbox import docker_backend as module

    async def attempt():
        async with await docker_backend.create(docker_basic_task, docker_basic_env) as sb:
            for i in range(4):
                assert (await sb.exec(f"echo {i}")).ok
            return sb.container_id, _exec_monitors(sb.container_id)

    container_id, during = asyncio.run(attempt())
    assert _exec_monitors(container_id) == 0
    # Positive control: podman keeps each exec's monitor for minutes after the command ended.
    monkeypatch.setattr(module, "reap_exec_monitors", lambda container_id: 0)
    kept, _ = asyncio.run(attempt())
    left = _exec_monitors(kept)
    assert during >= 4 and left >= 4, (during, left)
    assert module.reap_exec_monitors.__name__ == "<lambda>"
    monkeypatch.undo()
    assert module.reap_exec_monitors(kept) == left and _exec_monitors(kept) == 0


@docker
def test_close_removes_the_container_and_is_idempotent(docker_backend, docker_basic_task, docker_basic_env):
    from docker.errors import NotFound

    async def go():
        sb = await docker_backend.create(docker_basic_task, docker_basic_env)
        await sb.start()
        cid = sb.container_id
        # Nothing inside can take the sandbox down: pid 1 ignores the signals a command can send it.
        shot = await sb.exec("kill -TERM 1; kill -INT 1; kill -HUP 1; kill -9 1; sleep 0.3; echo survived")
        config = docker_backend.client.api.inspect_container(cid)["Config"]
        await sb.close()
        await sb.close()
        return cid, shot, config

    cid, shot, config = asyncio.run(go())
    assert shot.stdout == "survived\n"
    # The engine stops it with SIGKILL (which pid 1 cannot ignore), not with a signal it ignores
    # until the engine's 10 s grace period ends.
    assert str(config.get("StopSignal")) in ("SIGKILL", "9"), config.get("StopSignal")
    with pytest.raises(NotFound):
        docker_backend.client.api.inspect_container(cid)


@docker
def test_protections_report_what_the_engine_applied(in_docker, docker_backend):
    async def go(sb):
        return (await sb.exec("head -c 4 /etc/shadow"),  # root's DAC_OVERRIDE is kept
                await sb.exec("mount -t tmpfs none /mnt"),  # CAP_SYS_ADMIN is not
                await sb.exec("cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null"))

    shadow, mount, pids = in_docker(go)
    assert shadow.ok and not mount.ok
    assert pids.stdout.split()[0] == str(TIGHT.pids)
    found = {p.name: p for p in docker_backend.protections()}
    for name in ("loopback-only network", "capabilities dropped", "no-new-privileges", "memory cgroup",
                 "pids cgroup", "rlimits", "no-leftover kill"):
        assert found[name].active, found[name]
    # The storage cap is claimed only when the engine accepted storage_opt (podman needs xfs+pquota).
    assert found["storage cap"].active is bool(docker_backend._storage_opt)
    # A fresh backend (what `doctor` sees) observes a probe container of its own, started from the
    # plain Debian base (ubuntu:24.04, this module's image, has a base of its own): put it on the engine.
    from autoenvscaling.sandbox.docker_backend import DockerBackend

    asyncio.run(docker_backend.prepare(docker_task("FROM debian:trixie\n", name="docker-probe-base")))
    fresh = DockerBackend(policy=SandboxPolicy(pids=77))
    seen = {p.name: p for p in fresh.protections()}
    asyncio.run(fresh.aclose())
    assert seen["pids cgroup"].active and "77" in seen["pids cgroup"].detail
    assert seen["loopback-only network"].active and seen["capabilities dropped"].active


@docker
def test_dockerfile_builds_and_is_cached(docker_backend):
    dockerfile = ("FROM debian:bookworm-slim AS stage\nRUN echo from-stage > /stage.txt\n"
                  "FROM ubuntu:24.04\nWORKDIR /srv/app\nENV MODE=built\nCOPY conf/ ./conf/\n"
                  "COPY --from=stage /stage.txt /opt/\nRUN cat conf/settings.ini > /opt/copied && echo $MODE > /opt/mode\n")
    # A fresh nonce in the context: the engine keeps images between runs, and this test must build.
    task = docker_task(dockerfile, files={"environment/conf/settings.ini": "[x]\nkey=1\n",
                                          "environment/nonce": uuid.uuid4().hex}, name="docker-build")

    async def go():
        first = await docker_backend.prepare(task)
        again = await docker_backend.prepare(task)
        async with await docker_backend.create(task, first) as sb:
            seen = await sb.exec("pwd; echo $MODE; cat /opt/copied /opt/mode /opt/stage.txt")
        changed = task.with_files({"environment/conf/settings.ini": "[x]\nkey=2\n"})
        other = await docker_backend.prepare(changed)
        return first, again, seen, other

    first, again, seen, other = asyncio.run(go())
    for env in (first, other):
        docker_backend.client.images.remove(env.details.image)
    assert seen.stdout.split() == ["/srv/app", "built", "[x]", "key=1", "built", "from-stage"]
    assert first.workdir == "/srv/app" and first.env["MODE"] == "built"
    assert not first.cached and again.cached and again.ref == first.ref
    assert first.details.build_log and not again.details.build_log  # the engine built nothing the second time
    assert not other.cached and other.ref != first.ref  # the build context is part of the cache key


PIP_DOCKERFILE = ("FROM python:3.11-slim-bookworm\n"
                  "COPY . /srv/context/\n"
                  "RUN test -s \"$SSL_CERT_FILE\" && echo \"ca-mounted=$SSL_CERT_FILE pip=$PIP_CERT\"\n"
                  "RUN pip install --no-cache-dir six\n")


@docker
def test_build_steps_reach_pypi_and_bake_in_nothing(docker_backend):
    """RUN pip install goes through the host's proxy CA (mounted for RUN steps only); the image keeps
    neither the bundle (not even through COPY . of the context) nor the variables that named it."""
    from autoenvscaling.sandbox.buildnet import CA_TARGET, CA_VARIABLES
    from autoenvscaling.sandbox.docker_images import CA_CONTEXT_NAME

    if docker_backend.images.access.ca is None:
        pytest.skip("this host has no CA bundle to pass to builds")
    # A fresh nonce: the build must run here (its log is the evidence), not come from the cache.
    task = docker_task(PIP_DOCKERFILE, files={"environment/nonce": uuid.uuid4().hex}, name="docker-pip")
    prepared = asyncio.run(docker_backend.prepare(task))
    client = docker_backend.client
    try:
        async def go():
            async with await docker_backend.create(task, prepared) as sb:
                return await sb.exec("python -c 'import six; print(six.__name__)'; ls -A /srv/context; "
                                     "find / -xdev -name '*autoenvscaling-build*' 2>/dev/null; env | grep -c CERT")

        seen = asyncio.run(go())
        layers = client.api.create_container(prepared.ref, ["true"])["Id"]  # never started: /dev as built
        try:
            stream, _ = client.api.get_archive(layers, "/dev")
            dev = [m.name for m in tarfile.open(fileobj=io.BytesIO(b"".join(stream)))]
        finally:
            client.api.remove_container(layers, force=True)
        config_env = client.api.inspect_image(prepared.ref)["Config"]["Env"]
    finally:
        client.images.remove(prepared.details.image)
    assert f"ca-mounted={CA_TARGET} pip={CA_TARGET}" in prepared.details.build_log
    assert seen.stdout.split() == ["six", "Dockerfile", "nonce", "0"], seen  # no bundle, no .dockerignore we added
    assert not [name for name in dev if "autoenvscaling" in name]
    assert not [item for item in config_env if item.split("=")[0] in (*CA_VARIABLES, "PIP_INDEX_URL")]
    assert CA_CONTEXT_NAME not in seen.stdout


@docker
def test_build_cache_key_follows_the_ca_bundle_content_not_its_mtime(docker_backend, docker_basic_env, tmp_path):
    from autoenvscaling.sandbox.docker_images import BuildAccess, ImageStore

    bundle = tmp_path / "ca.crt"
    bundle.write_bytes(b"-----BEGIN CERTIFICATE-----\nfirst\n-----END CERTIFICATE-----\n")

    def tag() -> str:
        store = ImageStore(lambda: docker_backend.client, tmp_path, BuildAccess.from_host({"SSL_CERT_FILE": str(bundle)}))
        return store.plan_build("FROM ubuntu:24.04\nRUN true\n", {}).tag

    first = tag()
    os.utime(bundle, (time.time() + 3600, time.time() + 3600))
    assert tag() == first  # a touched bundle rebuilds nothing
    bundle.write_bytes(b"-----BEGIN CERTIFICATE-----\nrotated\n-----END CERTIFICATE-----\n")
    assert tag() != first  # new content: the images that used the old bundle are rebuilt
    proxied = ImageStore(lambda: docker_backend.client, tmp_path,
                         BuildAccess.from_host({"SSL_CERT_FILE": str(bundle), "https_proxy": "http://proxy:3128"}))
    plan = proxied.plan_build("FROM ubuntu:24.04\nRUN true\n", {})
    assert plan.tag == tag() and plan.buildargs["https_proxy"] == "http://proxy:3128"  # proxies only carry traffic
    indexed = ImageStore(lambda: docker_backend.client, tmp_path, BuildAccess.from_host(
        {"SSL_CERT_FILE": str(bundle), "PIP_INDEX_URL": "https://mirror.example/simple",
         "PIP_EXTRA_INDEX_URL": "file:///opt/wheels"}))
    plan = indexed.plan_build("FROM ubuntu:24.04\nRUN true\n", {})
    assert plan.tag != tag() and "PIP_EXTRA_INDEX_URL" not in plan.buildargs  # host paths stay out
    rendered = tarfile.open(fileobj=io.BytesIO(plan.context)).extractfile("Dockerfile").read().decode().splitlines()
    assert rendered[0].startswith("FROM autoenvscaling/base:") and "ARG PIP_INDEX_URL" in rendered[1:]
    assert rendered[-1] == ("RUN --mount=type=bind,source=.autoenvscaling-build-ca.crt,"
                            "target=/dev/.autoenvscaling-build/ca-certificates.crt,readonly true")


@docker
def test_build_failure_raises_build_error_with_output_tail(docker_backend):
    task = docker_task("FROM ubuntu:24.04\nRUN echo boom-marker-$((6*7)) && exit 3\n", name="docker-broken")
    with pytest.raises(BuildError) as info:
        asyncio.run(docker_backend.prepare(task))
    assert "\n" not in info.value.message and "failed" in info.value.message
    assert "boom-marker-42" in str(info.value)


@docker
def test_a_build_that_needs_the_internet_is_named_by_its_first_real_line(docker_backend):
    # bash reaches for github.com (which this machine cannot resolve), then fails on what follows.
    task = docker_task("FROM ubuntu:24.04\nRUN bash -c 'exec 3<>/dev/tcp/github.com/443; echo connected >&3'\n",
                       name="docker-build-needs-network")
    with pytest.raises(BuildError) as info:
        asyncio.run(docker_backend.prepare(task))
    assert info.value.message == ("docker build needs a host this machine cannot reach: "
                                  "bash: line 1: github.com: Name or service not known"), info.value
    assert "vendor what the step downloads into environment/" in (info.value.hint or "")


@docker
def test_docker_image_and_unmapped_images(docker_backend):
    mapped = docker_task(None, environment={"docker_image": "python:3.11-slim"}, name="docker-image")
    local = docker_task(None, environment={"docker_image": "autoenvscaling/base:python-3.11-bookworm"}, name="docker-local")
    unknown = docker_task("FROM quay.io/nobody/nothing:1\n", name="docker-unknown")

    async def go():
        env = await docker_backend.prepare(mapped)
        async with await docker_backend.create(mapped, env) as sb:
            py = await sb.exec("python -c 'import sys; print(42, sys.version_info[:2])'; pip --version")
        return env, await docker_backend.prepare(local), py

    env, local_env, py = asyncio.run(go())
    assert py.stdout.startswith("42 (3, 11)\n") and "pip" in py.stdout  # what python:3.11 images offer
    assert env.ref == local_env.ref  # python:3.11-* maps to the local Python 3.11 base the engine now has
    assert env.details.base_mapping == {"image": "python:3.11-slim", "base": "python-3.11-bookworm", "note": ""}
    assert local_env.details.base_mapping["note"] == "the engine's own image, used as is"
    assert env.env["PYTHON_VERSION"] == "3.11" and env.env["LANG"] == "C.UTF-8"  # the recipe's ENV
    with pytest.raises(BuildError, match="cannot be pulled"):
        asyncio.run(docker_backend.prepare(unknown))


@docker
def test_base_mapping_and_recipe_stamp(docker_backend, docker_basic_env):
    """Every external FROM records what it became; the base image carries its recipe's stamp."""
    import hashlib

    from autoenvscaling.sandbox.rootfs import BASES

    mapping = docker_basic_env.details.base_mapping
    assert mapping["image"] == "ubuntu:24.04" and mapping["base"] == "ubuntu-on-trixie"
    assert "stand-in" in mapping["note"]  # not faithful, and says so
    assert docker_basic_env.details.base_mappings == [mapping]
    labels = docker_backend.client.api.inspect_image(f"autoenvscaling/base:{mapping['base']}")["Config"]["Labels"]
    assert labels["autoenvscaling.rootfs"] == hashlib.sha256(BASES[mapping["base"]].recipe().encode()).hexdigest()[:16]


@docker
def test_stale_containers_of_dead_processes_are_removed(docker_backend, docker_basic_env):
    import socket
    import subprocess

    from docker.errors import NotFound

    dead = subprocess.Popen(["true"])
    dead.wait()
    client = docker_backend.client
    labels = {"autoenvscaling": "sandbox", "autoenvscaling.pid": str(dead.pid),
              "autoenvscaling.host": socket.gethostname()}
    # Created, never started: a crashed process's sandbox in whatever state it was left.
    stale = client.containers.create(docker_basic_env.ref, ["sleep", "60"], labels=labels)
    mine = client.containers.create(docker_basic_env.ref, ["sleep", "60"],
                                    labels={**labels, "autoenvscaling.pid": str(os.getpid())})
    # A compose attempt's network and volume, left the same way.
    network = client.networks.create(f"aes-net-stale{uuid.uuid4().hex[:6]}", internal=True, labels=labels)
    volume = client.volumes.create(f"aes-stale-{uuid.uuid4().hex[:6]}", labels=labels)
    try:
        assert docker_backend.remove_stale() >= 3
        with pytest.raises(NotFound):
            client.api.inspect_container(stale.id)
        with pytest.raises(NotFound):
            client.api.inspect_network(network.id)
        with pytest.raises(NotFound):
            client.api.inspect_volume(volume.name)
        client.api.inspect_container(mine.id)  # a live process's sandbox stays
    finally:
        mine.remove(force=True)


@docker
def test_base_image_is_shared_across_cache_directories(docker_backend, docker_basic_env, tmp_path):
    """Another cache directory (a user's, next to the tests') reuses the engine's base image: no
    root filesystem is built there and nothing is re-imported."""
    from autoenvscaling.sandbox.docker_images import ImageStore

    base = docker_basic_env.details.base_mapping["base"]
    before = docker_backend.client.api.inspect_image(f"autoenvscaling/base:{base}")["Id"]
    store = ImageStore(lambda: docker_backend.client, tmp_path)
    ref = store.base_image(base)
    assert docker_backend.client.api.inspect_image(ref)["Id"] == before  # the same image: not imported again
    assert not (tmp_path / "rootfs").exists()


def test_no_engine_is_one_clear_line(monkeypatch, tmp_path):
    pytest.importorskip("docker")
    from autoenvscaling.sandbox.docker_backend import DockerBackend

    dead = f"unix://{tmp_path}/dead.sock"
    monkeypatch.setenv("DOCKER_HOST", dead)
    ok, why = DockerBackend.available()
    assert not ok and "\n" not in why and dead in why and "podman system service" in why
    backend = DockerBackend(policy=SandboxPolicy(), cache_dir=tmp_path)
    with pytest.raises(MissingPrerequisite) as info:
        asyncio.run(backend.prepare(docker_task()))
    assert info.value.message == str(info.value) and "\n" not in str(info.value)
    assert f"no Docker-API engine is reachable at {dead}" in info.value.message
    assert "DOCKER_HOST" in (info.value.hint or "")
    asyncio.run(backend.aclose())


def test_tar_stream_of_a_tree_keeps_links_and_modes(tmp_path):
    """The base image is imported from this stream; a wrong entry would break every container."""
    from autoenvscaling.archive import tree_tar

    (tmp_path / "usr" / "bin").mkdir(parents=True)
    (tmp_path / "usr" / "bin" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "usr" / "bin" / "tool").chmod(0o755)
    (tmp_path / "bin").symlink_to("usr/bin")
    (tmp_path / "usr" / "bin" / "hard").hardlink_to(tmp_path / "usr" / "bin" / "tool")
    data = b"".join(tree_tar(tmp_path))
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: m for m in tar}
    assert members["bin"].issym() and members["bin"].linkname == "usr/bin"
    assert members["usr/bin/tool"].mode & 0o777 == 0o755
    assert {members["usr/bin/hard"].islnk(), members["usr/bin/tool"].islnk()} == {True, False}
    assert members["usr"].isdir()


def test_uploads_are_cut_after_the_end_of_archive_blocks():
    """podman stops reading an upload at the tar's end blocks and can fail it with "broken pipe" while
    the record padding is still being sent (a CI run lost a compose start to it): what is uploaded ends
    at the end blocks, with every member intact; anything that is not a padded tar is left alone."""
    from autoenvscaling.archive import make_tar
    from autoenvscaling.archive import unpadded_tar

    padded = make_tar({"a/b.txt": b"x" * 700, "c.sh": b"echo\n", "zeros.bin": b"\0" * 2048})
    assert len(padded) % tarfile.RECORDSIZE == 0
    cut = unpadded_tar(padded)
    assert len(cut) < len(padded) and len(cut) % tarfile.BLOCKSIZE == 0
    assert cut[-2 * tarfile.BLOCKSIZE:] == b"\0" * (2 * tarfile.BLOCKSIZE) and padded.startswith(cut)
    with tarfile.open(fileobj=io.BytesIO(cut)) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}
    assert files == {"a/b.txt": b"x" * 700, "c.sh": b"echo\n", "zeros.bin": b"\0" * 2048}
    assert unpadded_tar(cut) == cut
    assert unpadded_tar(b"not a tar") == b"not a tar"
    trailing = padded + b"junk"
    assert unpadded_tar(trailing) == trailing


@docker
def test_a_stand_in_the_harbor_harness_lent_a_real_name_is_still_mapped(docker_backend, tmp_path, monkeypatch):
    """While bench/bench_harbor.py has put our python stand-in under ``python:3.11-slim`` for Harbor's
    builds, our own builds still map that name (its label says what it is); an unlabelled image under
    a name is the engine's own and used as is (the positive control)."""
    import subprocess

    from autoenvscaling.sandbox.docker_images import STAND_IN_LABEL

    base = docker_backend.images.base_image("python-3.11-bookworm")
    names = {"labelled": "localhost/aes-test-stand-in:1", "plain": "localhost/aes-test-own:1"}
    for kind, name in names.items():
        (tmp_path / kind).mkdir()
        label = f"\nLABEL {STAND_IN_LABEL}=1" if kind == "labelled" else ""
        (tmp_path / kind / "Dockerfile").write_text(f"FROM {base}{label}\n")
        subprocess.run(["podman", "build", "-q", "-t", name, str(tmp_path / kind)], check=True, capture_output=True)
    monkeypatch.setenv("AUTOENVSCALING_BASE_IMAGES", "localhost/aes-test-*=python-3.11-bookworm")
    try:
        lent = docker_backend.images.resolve_mapping(names["labelled"])
        own = docker_backend.images.resolve_mapping(names["plain"])
    finally:
        for name in names.values():
            subprocess.run(["podman", "rmi", "-f", name], capture_output=True)
    assert lent == (base, {"image": names["labelled"], "base": "python-3.11-bookworm", "note": "mapped by AUTOENVSCALING_BASE_IMAGES"})
    assert own[0] == names["plain"] and own[1]["note"] == "the engine's own image, used as is"

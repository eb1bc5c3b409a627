"""Well-known tool images provided offline (sandbox/tool_images.py): ``COPY --from=ghcr.io/astral-sh/uv``
resolved to uv's own wheel from PyPI (or a wheelhouse), built into bwrap layers and imported into a
real engine under the image's name; the tool-image-uv and verifier-pip-install fixtures through
gates 1-6 on both backends (on docker, verifier-pip-install's repeats and cheats with -m slow)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autoenvscaling.errors import BuildError, MissingPrerequisite, UnsupportedDockerfile
from autoenvscaling.sandbox.bwrap_build import plan_build
from autoenvscaling.sandbox.tool_images import UV_LATEST, provide_tool_image, resolve_tool_image, tool_image_facts

from .conftest import make_task
from .conftest_docker import *  # noqa: F403 - the shared docker fixtures
from .conftest_docker import FIXTURES

UV_COPY = "COPY --from=ghcr.io/astral-sh/uv:latest /uv /uvx /bin/\n"
FIXTURE_NAMES = ("tool-image-uv", "verifier-pip-install")


@pytest.mark.parametrize("image, requirement", [
    ("ghcr.io/astral-sh/uv:latest", f"uv=={UV_LATEST}"),
    ("ghcr.io/astral-sh/uv", f"uv=={UV_LATEST}"),
    ("ghcr.io/astral-sh/uv:0.9.7", "uv==0.9.7"),
    ("ghcr.io/astral-sh/uv:0.9", "uv==0.9.*"),
    ("ghcr.io/astral-sh/uv:python3.12-bookworm", None),  # a distro image with uv in it, not the tool image
    ("ghcr.io/astral-sh/uv:0.9.7@sha256:" + "0" * 64, None),  # bytes we cannot reproduce
    ("busybox:latest", None),
])
def test_which_images_are_tool_images(image, requirement):
    tool = resolve_tool_image(image)
    assert (tool.requirement if tool else None) == requirement
    if tool:
        assert tool.files == ("uv", "uvx")


def test_the_uv_image_comes_from_the_musl_wheel_once(tmp_path):
    """From PyPI into the shared cache: uv's static musl binaries, as in the image; cached after."""
    tool = resolve_tool_image("ghcr.io/astral-sh/uv:latest")
    provided = provide_tool_image(tool)
    facts = tool_image_facts(provided)
    assert facts["version"] == UV_LATEST and "musllinux" in facts["wheel"]
    assert sorted(p.name for p in (provided / "root").iterdir()) == ["uv", "uvx"]
    out = subprocess.run([str(provided / "root" / "uv"), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith(f"uv {UV_LATEST}")
    # Cached: a fresh process finds the image on disk and runs no pip (no subprocess at all).
    again = subprocess.run([sys.executable, "-c", "import subprocess\n"
                            "def refuse(*args, **kwargs): raise AssertionError(f'ran {args[0]!r}')\n"
                            "subprocess.run = subprocess.Popen = refuse\n"
                            "from autoenvscaling.sandbox.tool_images import provide_tool_image, resolve_tool_image\n"
                            "print(provide_tool_image(resolve_tool_image('ghcr.io/astral-sh/uv')))"],
                           capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.strip() == str(provided), again.stderr


def test_a_wheelhouse_replaces_pypi_and_parallel_workers_share_one_result(tmp_path):
    """A wheelhouse holding only uv's glibc wheel (the musl one is preferred, not required)."""
    wheelhouse = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--platform", "manylinux_2_17_x86_64", "--dest", str(wheelhouse), "uv==0.9.7"],
                   check=True, capture_output=True)
    code = ("import sys; from pathlib import Path; from autoenvscaling.sandbox.tool_images import provide_tool_image, "
            "resolve_tool_image; print(provide_tool_image(resolve_tool_image('ghcr.io/astral-sh/uv:0.9.7'), "
            f"cache_dir=Path(sys.argv[1]), wheelhouse=Path({str(wheelhouse)!r})))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "cache")], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outputs = {p.communicate(timeout=300)[0].strip() for p in procs}
    assert len(outputs) == 1 and all(p.returncode == 0 for p in procs)
    provided = Path(outputs.pop())
    assert "manylinux" in tool_image_facts(provided)["wheel"]
    out = subprocess.run([str(provided / "root" / "uvx"), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("uvx 0.9.7")
    leftovers = [p.name for p in (tmp_path / "cache" / "tools").iterdir() if not p.name.startswith(".")]
    assert leftovers == [provided.name]  # no half-built directory


def test_without_pypi_or_the_wheel_it_says_what_to_do_in_one_line(tmp_path):
    tool = resolve_tool_image("ghcr.io/astral-sh/uv:0.9.7")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingPrerequisite) as info:
        provide_tool_image(tool, cache_dir=tmp_path / "cache", wheelhouse=tmp_path / "empty")
    message, hint = info.value.message, info.value.hint or ""
    assert message.startswith("cannot provide the image ghcr.io/astral-sh/uv:0.9.7 offline: no uv==0.9.7 wheel")
    assert "\n" not in str(info.value) and "AUTOENVSCALING_WHEELHOUSE" in hint and "load the image into the engine" in hint


def test_bwrap_plans_copies_from_the_uv_image_and_refuses_other_images():
    plan = plan_build(make_task("FROM debian:bookworm-slim\n" + UV_COPY))
    step = plan.steps[0]
    assert step.tool is not None and step.payload["from"] == f"uv=={UV_LATEST}" and step.stdin is None
    assert any("COPY --from=ghcr.io/astral-sh/uv:latest: provided offline" in note for note in plan.notes)
    with pytest.raises(BuildError, match=r"Dockerfile line 2: /usr/bin/uv is not in ghcr.io/astral-sh/uv:latest"):
        plan_build(make_task("FROM debian:bookworm-slim\nCOPY --from=ghcr.io/astral-sh/uv:latest /usr/bin/uv /bin/\n"))
    with pytest.raises(UnsupportedDockerfile, match=r"COPY --from=busybox:latest is not supported .*use --backend docker"):
        plan_build(make_task("FROM debian:bookworm-slim\nCOPY --from=busybox:latest /bin/sh /bin/\n"))


def test_bwrap_builds_the_copy_and_reports_a_missing_wheel_at_its_line(backend, monkeypatch, tmp_path):
    task = make_task("FROM debian:bookworm-slim\nCOPY --from=ghcr.io/astral-sh/uv /uv /usr/local/bin/uv\n")

    async def check():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            return await sb.exec("uv --version && stat -c %A /usr/local/bin/uv && ls /bin/uvx /uvx 2>/dev/null | wc -l")

    out = asyncio.run(check())
    version, mode, others = out.stdout.splitlines()
    assert version.startswith(f"uv {UV_LATEST} ") and (mode, others) == ("-rwxr-xr-x", "0"), out.tail()  # /uv alone
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("AUTOENVSCALING_WHEELHOUSE", str(tmp_path / "empty"))
    missing = make_task("FROM debian:bookworm-slim\nCOPY --from=ghcr.io/astral-sh/uv:0.0.1 /uv /bin/\n")
    with pytest.raises(MissingPrerequisite, match=r"^Dockerfile line 2: cannot provide the image "
                                                  r"ghcr.io/astral-sh/uv:0.0.1 offline"):
        asyncio.run(backend.prepare(missing))


def _validate(backend, names, *, skip=()):
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator
    from autoenvscaling.plugins import create_host

    validator = Validator(host=create_host(), backend=backend, settings=GateSettings(flaky_runs=2, skip=tuple(skip)))

    async def go():
        return [await validator.validate(FIXTURES / name) for name in names]

    return asyncio.run(go())


@pytest.mark.docker
def test_docker_imports_the_uv_image_under_its_name_and_uses_the_engines_own(docker_backend):
    """The engine gets ghcr.io/astral-sh/uv:latest (labelled, with the image's WORKDIR and
    ENTRYPOINT) and the Dockerfile builds unchanged; an image the engine already has under a tool
    image's name is the user's and is used as it is; an unknown image is refused in one line."""
    from autoenvscaling.archive import make_tar
    from autoenvscaling.sandbox.docker_images import TOOL_LABEL

    store = docker_backend.images
    image_id, note = store.copy_source("ghcr.io/astral-sh/uv:latest")
    attrs = store.api.inspect_image("ghcr.io/astral-sh/uv:latest")
    assert attrs["Id"] == image_id and "provided offline" in note
    assert attrs["Config"]["Labels"][TOOL_LABEL].startswith(f"uv-{UV_LATEST}-")
    assert attrs["Config"]["Entrypoint"] == ["/uv"] and attrs["Config"]["WorkingDir"] == "/io"
    assert store.copy_source("ghcr.io/astral-sh/uv:latest")[0] == image_id  # no second import

    own = "ghcr.io/astral-sh/uv:0.0.1"  # no such uv on PyPI: only the engine's own image can serve it
    store.api.import_image(src=make_tar({"uv": (b"#!/bin/sh\necho mine\n", True)}), repository=own)
    try:
        assert store.copy_source(own) == (store.api.inspect_image(own)["Id"], "")
    finally:
        store.api.remove_image(own, force=True)
    with pytest.raises(BuildError, match=r"COPY --from=registry.example/tools:1: the image is not on the engine") as info:
        store.copy_source("registry.example/tools:1")
    assert "load it into the engine" in (info.value.hint or "")


@pytest.mark.docker
def test_docker_fixtures_pass_gates_1_to_6(docker_backend):
    """tool-image-uv (the tool image imported into the engine) through every gate; verifier-pip-install
    through its oracle and null attempts (its repeats and the red team's cheats go with -m slow below)."""
    for names, skip in ((FIXTURE_NAMES[:1], ()), (FIXTURE_NAMES[1:], ("reset", "flaky", "redteam"))):
        for report in _validate(docker_backend, names, skip=skip):
            assert report.status == "valid", (report.task, report.reason)
            null = next(g for g in report.gates if g.name == "null")
            assert null.evidence[0].values["reward"] == 0.0
            assert {g.name for g in report.gates if g.status == "skip"} >= set(skip)


@pytest.mark.docker
@pytest.mark.slow
def test_docker_pip_install_fixture_passes_its_repeats(docker_backend):
    report = _validate(docker_backend, FIXTURE_NAMES[1:])[0]
    assert report.status == "valid", (report.task, report.reason)


def test_built_layers_record_the_provided_wheel(backend):
    """The COPY's layer key covers the provided files' digest, and its layer holds both binaries."""
    from autoenvscaling.tasks import read_task

    prepared = asyncio.run(backend.prepare(read_task(FIXTURES / "tool-image-uv")))
    notes = json.dumps(prepared.details.notes)
    assert "COPY --from=ghcr.io/astral-sh/uv:latest: provided offline" in notes
    copy_layer = next(Path(backend.store.fs(key)) for key in prepared.details.layers
                      if backend.store.meta(key).get("instruction", "").startswith("COPY --from"))
    assert sorted(p.name for p in (copy_layer / "usr/bin").iterdir()) == ["uv", "uvx"]  # /bin is usr/bin there

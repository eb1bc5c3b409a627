"""Harbor itself as a client of what we generate (slow: installs Harbor, builds every domain's image).

``harbor lint`` (Harbor 0.26, its default rules) over 10 generated tasks of each domain finds nothing
but ``shared-verifier`` on tasks that chose Harbor's shared verifier (``harbor_client.EXPLAINED_RULE``); Harbor's
oracle scores 1 and its nop agent 0 on one task of each domain, run on podman.

    scripts/test.sh -m slow tests/test_harbor_client.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autoenvscaling.errors import MissingPrerequisite
from autoenvscaling.plugins import create_host
from autoenvscaling.tasks import short_name, write_task
from autoenvscaling.testing import harbor_client as hc

pytestmark = pytest.mark.slow
DOMAINS = ("terminal", "swe", "professional", "computer_use", "gpu_kernels")


@pytest.fixture(scope="module")
def harbor():
    if hc.python312() is None and not (hc.venv_path() / "bin" / "harbor").exists():
        pytest.skip("Harbor needs Python 3.12 and this machine has none (python3.12 on PATH or under pyenv)")
    try:
        return hc.harbor_bin(install=True)
    except MissingPrerequisite as exc:
        pytest.skip(exc.message)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    host, root = create_host(), tmp_path_factory.mktemp("harbor-client")
    suites = {}
    for name in DOMAINS:
        domain = host.domains.get(name)()
        families = [f.name for f in domain.families()]
        tasks = [domain.generate(families[i % len(families)], seed=300 + i, difficulty=("easy", "medium", "hard")[i % 3])
                 for i in range(10)]
        suites[name] = [write_task(t, root / name / short_name(t.name)) for t in tasks]
    return suites


@pytest.mark.parametrize("domain", DOMAINS)
def test_harbor_lint_finds_nothing_unexplained(harbor, generated, domain):
    findings = hc.lint(harbor, generated[domain])
    assert not hc.unexplained(findings), hc.unexplained(findings)[:3]
    if domain == "computer_use":  # the positive control of the exception: Harbor does report it
        assert {f["rule"] for f in findings} == {hc.EXPLAINED_RULE}


def test_harbor_lint_still_finds_what_it_should(harbor, tmp_path, generated):
    """Positive control: a task in our older form (a name without org, our fields in Harbor's
    sections) is refused by the same lint."""
    src = generated["terminal"][0]
    old = tmp_path / "old"
    shutil.copytree(src, old)
    text = (old / "task.toml").read_text().replace('name = "autoenvscaling/', 'name = "')
    (old / "task.toml").write_text(text)
    assert "invalid-task-config" in {f["rule"] for f in hc.lint(harbor, [old])}
    tools = tmp_path / "tools"
    shutil.copytree(src, tools)
    text = (tools / "task.toml").read_text()
    (tools / "task.toml").write_text(text.replace("[agent]\n", '[agent]\ntools = ["bash"]\n', 1))
    assert "unknown-config-field" in {f["rule"] for f in hc.lint(harbor, [tools])}


@pytest.fixture(scope="module")
def podman():
    if not os.environ.get("DOCKER_HOST") or shutil.which("podman") is None:
        pytest.skip("podman serving the Docker API is needed (scripts/test.sh starts it)")


@pytest.mark.timeout(3600)  # Harbor builds the image first (gpu_kernels' brings PyPI's torch: minutes)
@pytest.mark.parametrize("domain", DOMAINS)
def test_harbors_oracle_scores_1_and_nop_0(harbor, podman, generated, domain, tmp_path):
    from autoenvscaling.sandbox.gpu import host_gpus

    task = generated[domain][0]
    gpus = 0 if domain == "gpu_kernels" and host_gpus().count == 0 else None
    with hc.stand_ins(hc.base_images([task])):
        oracle = hc.run_trial(harbor, task, "oracle", tmp_path, gpus=gpus)
        nop = hc.run_trial(harbor, task, "nop", tmp_path, gpus=gpus)
    assert (oracle.reward, nop.reward) == (1, 0), (oracle, nop)

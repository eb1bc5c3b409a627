"""Real-task failures reproduced by tests/fixtures/harbor/, validated through gates 1-6 on bwrap:
package installs whose dpkg scripts chown to other users, a python image with `pip install` at build
time (the registry through the host's CA), the Terminal-Bench base image, an ENTRYPOINT service, and a
verifier that stops the agent's program with Ctrl-C."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.gates.validate import Validator, validate_many

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
# fixture -> (base it must be built from, a phrase the mapping note must carry or "")
EXPECTED = {
    "bwrap-apt-packages": ("ubuntu-on-trixie", "Ubuntu 24.04 stand-in"),
    "python-image-pip": ("python-3.13-trixie", "trixie stands in to keep Python 3.13"),
    "tbench-base": ("tbench-trixie", "tmux and asciinema"),
    "entrypoint-service": ("debian-bookworm", ""),
    # COPY --from=ghcr.io/astral-sh/uv:latest (sandbox/tool_images.py); a verifier's `pip install pytest==8.4.1`
    "tool-image-uv": ("python-3.13-trixie", "Python 3.13 (trixie) stands in"),
    "verifier-pip-install": ("python-3.13-trixie", ""),
    "signal-ctrl-c": ("ubuntu-on-trixie", "Ubuntu 24.04 stand-in"),
}


@pytest.fixture(scope="module")
def reports(backend):
    from autoenvscaling.plugins import create_host

    settings = GateSettings(flaky_runs=2, skip=("decontamination", "near-duplicate", "calibration"))
    validator = Validator(host=create_host(), backend=backend, settings=settings)

    async def run():
        items = [FIXTURES / name for name in EXPECTED]
        return [r async for r in validate_many(items, validator=validator, executor=LocalExecutor(concurrency=2))]

    return {r.name: r for r in asyncio.run(run())}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_builds_and_scores_oracle_1_nop_0(reports, backend, name):
    report = reports[name]
    assert report.status == "valid", (report.reason, [(g.name, g.status, g.evidence) for g in report.gates])
    null = next(g for g in report.gates if g.name == "null")
    assert null.evidence[0].values["reward"] == 0.0
    if name == "entrypoint-service":  # what the ENTRYPOINT printed is kept with the attempt
        oracle = next(g for g in report.gates if g.name == "oracle")
        assert "service started" in oracle.evidence[0].values["entrypoint_output"]
    base, note = EXPECTED[name]

    from autoenvscaling.tasks import read_task
    prepared = asyncio.run(backend.prepare(read_task(FIXTURES / name)))  # cached: the gates built it
    mapping = prepared.details.base_mapping
    assert mapping["base"] == base and (note in mapping["note"] if note else mapping["note"] == "")

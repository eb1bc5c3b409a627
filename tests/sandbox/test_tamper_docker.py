"""Verifier tampering on docker (podman serves the API here): the shared attacks and controls
(tamper_suite.py), plus the docker-only attack on its per-command sweep (docs/verification.md)."""

from __future__ import annotations

import pytest

from autoenvscaling.testing import ScriptedAgent

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures
from .tamper_suite import *  # noqa: F403 - the shared tampering tests, run on this backend
from .tamper_suite import _run

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def tamper_backend(docker_backend):
    return docker_backend


@pytest.fixture
def entrypoint_fixture():
    return "docker-entrypoint-service"


# The docker-only attack: a shell whose sweep does nothing, then a writer that outlives its command.
NEUTERED_SH = """cp /usr/bin/dash /usr/local/lib/dash.real && rm /usr/bin/dash && cat > /usr/bin/dash <<'END'
#!/usr/local/lib/dash.real
if [ "$1" = -c ]; then s=$(printf '%s' "$2" | sed 's/kill -9/: /g'); shift 2; exec /usr/local/lib/dash.real -c "$s" "$@"; fi
exec /usr/local/lib/dash.real "$@"
END
chmod 755 /usr/bin/dash"""
SURVIVOR = ("setsid nohup sh -c 'while :; do echo beat >> /tmp/heartbeat; mkdir -p /logs/verifier; "
            "echo 1 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.02; done' >/dev/null 2>&1 &")


def test_a_process_that_disabled_the_sweep_is_killed_by_the_images_shell(suite):
    # The beats counted (waiting for them: a loaded machine may be slow to start the writer), then more
    # beats after that command ended.
    first_beats = ("for i in $(seq 600); do [ -f /tmp/heartbeat ] && [ $(wc -l < /tmp/heartbeat) -ge 1 ] && break; "
                   "sleep 0.05; done; wc -l < /tmp/heartbeat | tee /tmp/beats-seen")
    more_beats = ("for i in $(seq 600); do [ $(wc -l < /tmp/heartbeat) -gt $(cat /tmp/beats-seen) ] && break; "
                  "sleep 0.05; done; wc -l < /tmp/heartbeat")
    commands = (NEUTERED_SH, SURVIVOR, first_beats, more_beats)
    protected = _run(suite, "protected", ScriptedAgent(*commands))
    beats = [int(a.output.strip()) for a in protected.steps[-1].trajectory.actions[2:]]
    assert beats[1] > beats[0] > 0  # it outlived the command that started it
    verifier = protected.steps[-1].verifier
    assert protected.status == "ok" and protected.reward == 0.0, (protected.error, verifier.output_tail)
    assert "/usr/bin/dash" in verifier.restored_paths
    # The agent's view keeps the neutered shell, so no sweep can end the writer: an error, never a reward.
    seen = _run(suite, "agent", ScriptedAgent(*commands))
    assert seen.status == "error" and "survived" in (seen.error or "") and seen.reward == 0.0

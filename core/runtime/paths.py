"""Paths inside a sandbox: Harbor's layout (``tasks/paths.py``, re-exported here) and the runtime's own."""

from ..tasks.paths import AGENT_LOGS, LOGS_DIR, REWARD_JSON, REWARD_TXT, SOLUTION_DIR, TESTS_DIR, VERIFIER_LOGS

__all__ = ["AGENT_LOGS", "LOGS_DIR", "REWARD_JSON", "REWARD_TXT", "SOLUTION_DIR", "TESTS_DIR", "VERIFIER_LOGS",
           "VERIFIER_RUNTIME"]

# Where verifier runtimes appear (each at VERIFIER_RUNTIME/<name>); only while test.sh runs.
VERIFIER_RUNTIME = "/opt/autoenvscaling-verifier"

"""Harbor's runtime paths inside a sandbox."""

TESTS_DIR = "/tests"
SOLUTION_DIR = "/solution"
LOGS_DIR = "/logs"
VERIFIER_LOGS = "/logs/verifier"
AGENT_LOGS = "/logs/agent"
REWARD_TXT = "/logs/verifier/reward.txt"
REWARD_JSON = "/logs/verifier/reward.json"
# Where verifier runtimes appear (each at VERIFIER_RUNTIME/<name>); only while test.sh runs.
VERIFIER_RUNTIME = "/opt/autoenvscaling-verifier"

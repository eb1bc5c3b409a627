"""Harbor's layout inside a sandbox: where a task's tests/ and solution/ are uploaded, where the
verifier writes the reward and where logs go. Part of the task format's contract, so every layer
that runs a task (agents, the runtime, gates, plugins) reads these names from here."""

TESTS_DIR = "/tests"
SOLUTION_DIR = "/solution"
LOGS_DIR = "/logs"
VERIFIER_LOGS = "/logs/verifier"
AGENT_LOGS = "/logs/agent"
REWARD_TXT = "/logs/verifier/reward.txt"
REWARD_JSON = "/logs/verifier/reward.json"

#!/bin/bash
# Verifier of an autoenvscaling-terminal task. tests/ reaches /tests only now, after the agent.
#  1. Run the pytest checks @HOW@
#  2. reward.py (python3 -I) turns the per-check results into /logs/verifier/reward.json
#     ({"reward": r}) and /logs/verifier/tests.json (one 0/1 entry per check). The reward never
#     comes from an exit code.
# The script is one function, read whole before it runs: nothing written to this file meanwhile
# changes what it does. Programs the agent may have planted under /usr/local must not stand in for
# the verifier's tools, and only the verifier's user may write where the results go (the checks run
# the agent's code as another user; see test_outputs.py).
main() {
    PATH=$(printf '%s' "${PATH:-/usr/bin:/bin}" | tr ':' '\n' | grep -v '^/usr/local' | paste -sd: -)
    export PATH
    local logs=/logs/verifier
    mkdir -p "$logs"
    chown 0:0 / /logs "$logs" /tests 2>/dev/null
    chmod go-w / /logs "$logs" /tests 2>/dev/null
    rm -rf "$logs/ctrf.json" "$logs/junit.xml" "$logs/reward.json" "$logs/reward.txt" "$logs/tests.json"
    cd /tests || return 1

@RUN_CHECKS@

@REWARD@
}
main "$@"; exit $?

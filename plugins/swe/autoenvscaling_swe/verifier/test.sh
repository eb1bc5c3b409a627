#!/bin/bash
# Verifier of an autoenvscaling-swe task. tests/ reaches /tests only now, after the agent's turn.
# swe_verify.py runs the original tests against a scratch copy of the agent's /app and writes
# /logs/verifier/reward.json (1 when every FAIL_TO_PASS and PASS_TO_PASS test passes) and tests.json.
# Programs the agent may have planted under /usr/local must not stand in for the verifier's tools.
PATH=$(printf '%s' "${PATH:-/usr/bin:/bin}" | tr ':' '\n' | grep -v '^/usr/local' | paste -sd: -)
export PATH
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt /logs/verifier/tests.json
exec python3 /tests/swe_verify.py verify --spec /tests/swe.json

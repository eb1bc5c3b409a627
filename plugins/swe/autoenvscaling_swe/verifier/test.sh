#!/bin/bash
# Verifier of an autoenvscaling-swe task. tests/ reaches /tests only now, after the agent's turn.
# swe_verify.py runs the original tests against a scratch copy of the agent's /app, the tested code as
# another user, and writes /logs/verifier/reward.json (1 when every FAIL_TO_PASS and PASS_TO_PASS test
# passes and the run's canaries came out as drawn) and tests.json. -I: no PYTHON* variables, user site
# or working directory on sys.path.
# Programs the agent may have planted under /usr/local must not stand in for the verifier's tools.
PATH=$(printf '%s' "${PATH:-/usr/bin:/bin}" | tr ':' '\n' | grep -v '^/usr/local' | paste -sd: -)
export PATH
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt /logs/verifier/tests.json
exec python3 -I /tests/swe_verify.py verify --spec /tests/swe.json

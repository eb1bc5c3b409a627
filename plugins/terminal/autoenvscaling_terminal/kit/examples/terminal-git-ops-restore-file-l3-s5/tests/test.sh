#!/bin/bash
# Verifier of an autoenvscaling-terminal task. tests/ reaches /tests only now, after the agent.
#  1. Run the pytest checks with Harbor's convention: uvx with pinned pytest and the CTRF reporter.
#     Without uvx (or when uvx produced no report) use an installed pytest with a JUnit XML report.
#  2. reward.py turns the per-check results into /logs/verifier/reward.json ({"reward": r}) and
#     /logs/verifier/tests.json (one 0/1 entry per check). The reward never comes from an exit code.
# Programs the agent may have planted under /usr/local must not stand in for the verifier's tools.
PATH=$(printf '%s' "${PATH:-/usr/bin:/bin}" | tr ':' '\n' | grep -v '^/usr/local' | paste -sd: -)
export PATH
mkdir -p /logs/verifier
rm -f /logs/verifier/ctrf.json /logs/verifier/junit.xml /logs/verifier/reward.json \
      /logs/verifier/reward.txt /logs/verifier/tests.json
cd /tests || exit 1

if command -v uvx >/dev/null 2>&1; then
    uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 \
        pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
fi
if [ ! -s /logs/verifier/ctrf.json ]; then
    if python3 -c "import pytest" >/dev/null 2>&1; then
        python3 -m pytest --junitxml=/logs/verifier/junit.xml /tests/test_outputs.py -rA
    else
        echo "verifier: neither uvx nor pytest is available; every check counts as failed" >&2
    fi
fi

python3 /tests/reward.py --mode fraction

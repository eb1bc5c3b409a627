#!/bin/bash
# Scores the workspace with the professional domain's checker: tests/profcheck.py runs the family's
# tests/check_<family>.py against the hidden tests/spec.json and writes /logs/verifier/reward.txt
# (fraction of requirements met) and details.json. -E -s: no PYTHON* variables, no user site.
mkdir -p /logs/verifier
cd /tests
exec python3 -E -s /tests/profcheck.py

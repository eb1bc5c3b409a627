#!/bin/bash
# Scores the workspace with the professional domain's checker: tests/profcheck.py runs the family's
# tests/check_<family>.py against the hidden tests/spec.json and writes /logs/verifier/reward.txt
# and details.json. -I (isolated): no PYTHON* variables, no user site, and neither /tests nor the
# working directory on sys.path (profcheck.py adds /tests itself, for the family's checks).
mkdir -p /logs/verifier
cd /tests
exec python3 -I /tests/profcheck.py

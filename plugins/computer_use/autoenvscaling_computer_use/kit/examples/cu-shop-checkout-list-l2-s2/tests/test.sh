#!/bin/sh
# Score the web app's state against the hidden spec (tests/verify.py); writes /logs/verifier/reward.txt.
# -I: isolated (no PYTHON* variables, no user site, neither the script's folder nor the cwd on sys.path).
mkdir -p /logs/verifier
exec python3 -I /tests/verify.py

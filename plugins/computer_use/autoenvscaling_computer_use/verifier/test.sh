#!/bin/sh
# Score the web app's state against the hidden spec (tests/verify.py); writes /logs/verifier/reward.txt.
mkdir -p /logs/verifier
exec python3 -E -s /tests/verify.py

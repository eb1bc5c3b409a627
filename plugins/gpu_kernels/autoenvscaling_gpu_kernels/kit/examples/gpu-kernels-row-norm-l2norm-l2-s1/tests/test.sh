#!/bin/bash
# Harbor's verifier entry point for a kernel task: writes /logs/verifier/reward.txt and kernel.json.
# The harness comes from the trusted copy a verifier runtime installs, else from /tests (uploaded
# with the task); the spec and the reference always come from /tests, never from /app.
set -u
mkdir -p /logs/verifier
H=/opt/autoenvscaling-verifier/kernel-harness
if [ ! -f "$H/kernelcheck.py" ]; then
  H=/tests
fi
exec python3 -I "$H/kernelcheck.py"

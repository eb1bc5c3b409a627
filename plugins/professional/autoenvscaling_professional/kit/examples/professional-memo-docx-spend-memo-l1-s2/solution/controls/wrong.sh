#!/bin/bash
# Negative control: the plausible wrong answer (the action items are listed without their owners). Must not score 1.
set -eu
cd /app
python3 /solution/solve.py --wrong

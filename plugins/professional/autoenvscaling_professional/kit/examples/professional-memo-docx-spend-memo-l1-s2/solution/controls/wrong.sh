#!/bin/bash
# Negative control: the plausible wrong answer (the action items are listed without their owners). Must score at most 0.5.
set -eu
cd /app
python3 /solution/solve.py --wrong

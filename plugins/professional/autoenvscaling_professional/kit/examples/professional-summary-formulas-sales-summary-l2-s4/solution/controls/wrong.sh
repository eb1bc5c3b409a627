#!/bin/bash
# Negative control: the plausible wrong answer (every formula range stops one row short, leaving out the last order). Must score at most 0.5.
set -eu
cd /app
python3 /solution/solve.py --wrong

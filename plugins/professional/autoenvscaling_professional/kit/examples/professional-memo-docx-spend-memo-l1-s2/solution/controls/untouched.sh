#!/bin/bash
# Negative control: the input handed back as the answer. Must score 0.
set -eu
cd /app
python3 /solution/controls/untouched_outputs.py

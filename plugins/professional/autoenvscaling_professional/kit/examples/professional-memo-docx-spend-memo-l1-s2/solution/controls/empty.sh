#!/bin/bash
# Negative control: valid but empty outputs. Must score 0.
set -eu
cd /app
python3 /solution/controls/empty_outputs.py

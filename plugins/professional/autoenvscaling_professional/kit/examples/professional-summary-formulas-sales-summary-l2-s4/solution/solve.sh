#!/bin/bash
# Reference solution: solve.py reads the workspace and writes the outputs.
set -eu
cd /app
python3 /solution/solve.py

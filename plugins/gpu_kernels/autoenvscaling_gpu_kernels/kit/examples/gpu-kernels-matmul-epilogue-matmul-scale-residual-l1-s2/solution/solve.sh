#!/bin/bash
# Reference solution: a working Triton kernel, generated with the task.
set -eu
cp /solution/solution.py /app/solution.py

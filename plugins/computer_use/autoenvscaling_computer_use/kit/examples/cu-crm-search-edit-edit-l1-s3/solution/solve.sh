#!/bin/bash
# Reference solution: a Playwright script through the app's UI.
set -eu
cd /solution
HOME=/tmp python3 /solution/solve.py

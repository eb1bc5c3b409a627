#!/bin/bash
# Reference solution.
set -eu
cd /app

grep -hE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z \[ERROR\] ' logs/*.log > /tmp/errors.log || true
mkdir -p out
{ echo service,errors; awk '{sub(/:$/, "", $3); print $3}' /tmp/errors.log | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 | awk '{print $2 "," $1}'; } > out/errors.csv
mkdir -p .
awk '{print $4}' /tmp/errors.log | LC_ALL=C sort -u > codes.txt

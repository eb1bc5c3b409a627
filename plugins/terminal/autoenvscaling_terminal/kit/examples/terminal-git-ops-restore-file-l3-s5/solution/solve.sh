#!/bin/bash
# Reference solution.
set -eu
cd /app

cd /app/repo
deleted=$(git log --diff-filter=D --format=%H -1 -- docs/ONCALL.md)
git checkout "$deleted^" -- docs/ONCALL.md
deleted=$(git log --diff-filter=D --format=%H -1 -- docs/RUNBOOK.md)
git checkout "$deleted^" -- docs/RUNBOOK.md
git -c user.name=Oracle -c user.email=oracle@example.test commit -q -m 'Restore deleted files'

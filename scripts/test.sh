#!/usr/bin/env bash
# All tests: set up (first time only), start a Docker-API engine (podman) for the docker backend's
# tests, then pytest over the core and every plugin. Extra arguments go to pytest
# (e.g. `-m slow` for the slow tests, `-k bwrap`). The tests run in PYTEST_WORKERS processes
# (pytest-xdist, default two more than the cores: a test waits on sandboxes, engines and servers part
# of its time; idle workers take tests from busy ones; 0 runs them in this process).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
if [ -z "${DOCKER_HOST:-}" ] && [ -f "$ROOT/.ci/podman.sh" ]; then
  eval "$(bash "$ROOT/.ci/podman.sh")" || echo "[test] podman service unavailable: docker-backend tests will skip" >&2
fi
# The cores, counted before OMP_NUM_THREADS is set: GNU nproc answers that variable's value instead.
cores="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"
export OMP_NUM_THREADS=1
# Bytecode is written (__pycache__, ignored by git) even where the environment says not to: else
# every worker rewrites every test module's asserts, and every Python process the tests start
# compiles the modules it imports again.
unset PYTHONDONTWRITEBYTECODE
cd "$ROOT"
# The trainer's tests first: a few of 30-56 s each, which collected last were what the run ended on
# while the other workers sat idle (pytest-xdist's worksteal runs what is collected last at the end).
paths=()
for d in trainer/tests tests plugins/*/tests; do [ -d "$d" ] && paths+=("$d"); done
count="${PYTEST_WORKERS:-$(( cores + 2 ))}"
workers=(-n "$count")
[ "$count" = "0" ] || workers+=(--dist worksteal)
exec python -m pytest "${paths[@]}" -m "${PYTEST_MARKERS:-not slow and not gpu}" "${workers[@]}" -q "$@"

#!/usr/bin/env bash
# Every distribution works from its wheel, not only from the editable installs the tests use.
#
# Builds the wheels of the core, each plugin and the trainer from a clean copy of the checkout (the
# files git knows of: no build/ or *.egg-info leftovers), installs them, not editable, into a fresh
# virtual environment (torch==2.13.0 first, as scripts/bootstrap.sh does), and there runs
# `autoenvscaling plugins list`, `autoenvscaling doctor` and, for every domain under plugins/, generates
# and admits one task (`autoenvscaling generate --mix DOMAIN=1 -n 1`, the domains in parallel, the
# bubblewrap sandbox). Fails, saying which, when a step fails or a domain admits nothing.
#
#   bash scripts/wheel_smoke.sh            # CI runs it from .ci/run
#   WHEEL_SMOKE_KEEP=1 bash scripts/wheel_smoke.sh   # keep the work folder (wheels, venv, suites, logs)
#
# Settings: WHEEL_SMOKE_DIR (the work folder; default a new temporary one), AUTOENVSCALING_CACHE (default
# the tests' cache, /tmp/autoenvscaling-test-cache, so the sandbox's base root filesystem and layers are
# built once for both), WHEEL_SMOKE_TIMEOUT (seconds one domain may take, default 600).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The build environment (.venv, with setuptools) and the system packages the sandbox needs.
source "$ROOT/scripts/bootstrap.sh"
BUILD_PY="${AUTOENVSCALING_VENV:-$ROOT/.venv}/bin/python"
export AUTOENVSCALING_CACHE="${AUTOENVSCALING_CACHE:-/tmp/autoenvscaling-test-cache}"
TIMEOUT="${WHEEL_SMOKE_TIMEOUT:-600}"
START=$SECONDS
say() { printf '[wheel-smoke %3ds] %s\n' "$((SECONDS - START))" "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

if [ -n "${WHEEL_SMOKE_DIR:-}" ]; then
  WORK="$WHEEL_SMOKE_DIR"; rm -rf "$WORK"; mkdir -p "$WORK"
else
  WORK="$(mktemp -d /tmp/wheel-smoke.XXXXXX)"
fi
WORK="$(cd "$WORK" && pwd)"
if [ "${WHEEL_SMOKE_KEEP:-0}" != 1 ] && [ -z "${WHEEL_SMOKE_DIR:-}" ]; then
  trap 'rm -rf "$WORK"' EXIT
fi

# --- the wheels ---------------------------------------------------------------------------------
# stage PATHSPEC...: copy what git tracks (or would: untracked, not ignored) under PATHSPEC into
# $WORK/src, as a fresh checkout has it. An in-tree `pip wheel` would also ship whatever a stale
# build/lib holds.
stage() {
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard -- "$@") |
    while IFS= read -r -d '' f; do [ -f "$ROOT/$f" ] && printf '%s\0' "$f"; done |
    (cd "$ROOT" && xargs -0 -r cp --parents -t "$WORK/src")
}
mkdir -p "$WORK/src" "$WORK/wheels" "$WORK/logs"
label() { [ "$1" = . ] && echo core || echo "${1//\//_}"; }
dists=(.)
for d in "$ROOT"/plugins/*/ "$ROOT"/trainer/; do
  [ -f "$d/pyproject.toml" ] && dists+=("$(realpath --relative-to="$ROOT" "$d")")
done
stage ':(glob)*' core   # the core: the top-level files (pyproject.toml, README.md) and core/
for d in "${dists[@]:1}"; do stage "$d"; done

say "building ${#dists[@]} wheels: ${dists[*]}"
pids=()
for d in "${dists[@]}"; do
  "$BUILD_PY" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
    -w "$WORK/wheels" "$WORK/src/$d" >"$WORK/logs/wheel-$(label "$d").log" 2>&1 &
  pids+=($!)
done
for i in "${!dists[@]}"; do
  wait "${pids[$i]}" || { cat "$WORK/logs/wheel-$(label "${dists[$i]}").log" >&2; die "pip wheel ${dists[$i]}"; }
done
wheels=("$WORK"/wheels/*.whl)
[ "${#wheels[@]}" -eq "${#dists[@]}" ] || die "expected ${#dists[@]} wheels, got: ${wheels[*]##*/}"

# --- a fresh virtual environment with the wheels --------------------------------------------------
say "installing the wheels into a fresh virtual environment $WORK/venv"
"${PYTHON:-python3}" -m venv "$WORK/venv"
VPY="$WORK/venv/bin/python"
pip=("$VPY" -m pip install -q --disable-pip-version-check --no-compile)
# torch first, pinned, as scripts/bootstrap.sh installs it: an unpinned torch pulls CUDA wheels.
"${pip[@]}" "torch==2.13.0" || die "pip install torch==2.13.0"
"${pip[@]}" "${wheels[@]}" || die "pip install of the wheels"

# From here on only the fresh environment: nothing of the checkout may be importable.
export PATH="$WORK/venv/bin:$PATH" VIRTUAL_ENV="$WORK/venv"
unset PYTHONPATH PYTHONHOME || true
cd "$WORK"
"$VPY" - "$WORK/venv" <<'EOF' || die "the packages do not come from the fresh environment's wheels"
import importlib.metadata as md, importlib.util, sys
from pathlib import Path
venv = Path(sys.argv[1]).resolve()
for dist in md.distributions():
    name = dist.metadata["Name"]
    if not name.startswith("autoenvscaling"):
        continue
    package = name.replace("-", "_")
    origin = Path(importlib.util.find_spec(package).origin).resolve()
    direct = dist.read_text("direct_url.json") or ""
    if venv not in origin.parents or '"editable": true' in direct:
        sys.exit(f"{name}: {package} comes from {origin} ({direct or 'no direct_url.json'})")
    print(f"  {name} {dist.version}: {origin.parent}")
EOF

AES="$WORK/venv/bin/autoenvscaling"
say "autoenvscaling plugins list"
"$AES" plugins list || die "autoenvscaling plugins list"
say "autoenvscaling doctor"
"$AES" doctor || die "autoenvscaling doctor"

# --- one admitted task per domain ---------------------------------------------------------------
domains=()
for d in "$ROOT"/plugins/*/; do [ -f "$d/pyproject.toml" ] && domains+=("$(basename "$d")"); done
listed="$("$AES" domains list)"
for domain in "${domains[@]}"; do
  grep -qw "$domain" <<<"$listed" || die "domain $domain is not installed from its wheel:"$'\n'"$listed"
done

say "generating and admitting one task in each of: ${domains[*]}"
pids=()
for domain in "${domains[@]}"; do
  timeout "$TIMEOUT" "$AES" generate --mix "$domain=1" -n 1 --difficulty easy --seed 0 -j 1 \
    --out "$WORK/suites/$domain" --json >"$WORK/logs/$domain.json" 2>"$WORK/logs/$domain.log" &
  pids+=($!)
done
failed=()
for i in "${!domains[@]}"; do
  domain="${domains[$i]}"
  rc=0; wait "${pids[$i]}" || rc=$?
  admitted="$("$VPY" -c 'import json, sys
try:
    print(sum(r["admitted"] for r in json.load(open(sys.argv[1]))["rounds"]))
except Exception:
    print(0)' "$WORK/logs/$domain.json")"
  tasks=$(find "$WORK/suites/$domain/tasks" -mindepth 2 -maxdepth 2 -name task.toml 2>/dev/null | wc -l)
  if [ "$rc" -ne 0 ] || [ "$admitted" -lt 1 ] || [ "$tasks" -lt 1 ]; then
    say "$domain: exit status $rc, $admitted admitted, $tasks task(s) in the suite; its log ends:"
    tail -n 40 "$WORK/logs/$domain.log" >&2 || true
    if [ -s "$WORK/suites/$domain/errors.log" ]; then   # proposals that crashed: their tracebacks
      say "$domain: $WORK/suites/$domain/errors.log ends:"; tail -n 20 "$WORK/suites/$domain/errors.log" >&2
    fi
    failed+=("$domain")
  else
    say "$domain: admitted $(ls "$WORK/suites/$domain/tasks")"
  fi
done
((${#failed[@]} == 0)) || die "no admitted task from the wheels for: ${failed[*]} (logs: $WORK/logs; keep them with WHEEL_SMOKE_KEEP=1)"
say "every distribution works from its wheel (${#dists[@]} wheels, ${#domains[@]} domains)"

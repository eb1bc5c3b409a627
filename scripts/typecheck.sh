#!/usr/bin/env bash
# The type checker (mypy) over the core, every first-party plugin and the trainer, as CI runs it.
# The core's sources live in core/ but import as `autoenvscaling`, so the check runs on a tree of
# links with the import names (build/typecheck/). Extra arguments go to mypy; MYPY_CACHE_DIR moves
# its cache (default build/typecheck/.cache); TYPECHECK_ONLY="autoenvscaling_swe ..." checks only those
# packages (and what they import).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${AUTOENVSCALING_VENV:-$ROOT/.venv}/bin/python"
TREE="$ROOT/build/typecheck"
mkdir -p "$TREE"
find "$TREE" -maxdepth 1 -type l -delete
ln -s "$ROOT/core" "$TREE/autoenvscaling"
packages=(-p autoenvscaling)
for pkg in "$ROOT"/plugins/*/autoenvscaling_* "$ROOT"/trainer/autoenvscaling_*; do
  case "$pkg" in *.egg-info) continue;; esac
  [ -f "$pkg/__init__.py" ] || continue
  ln -s "$pkg" "$TREE/$(basename "$pkg")"
  packages+=(-p "$(basename "$pkg")")
done
if [ -n "${TYPECHECK_ONLY:-}" ]; then
  packages=()
  for name in $TYPECHECK_ONLY; do packages+=(-p "$name"); done
fi
cd "$TREE"
exec "$PY" -m mypy --config-file "$ROOT/pyproject.toml" --python-executable "$PY" \
  --cache-dir "${MYPY_CACHE_DIR:-$TREE/.cache}" "${packages[@]}" "$@"

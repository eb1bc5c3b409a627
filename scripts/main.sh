#!/usr/bin/env bash
# The main job: set up (first time only), then run the flywheel. Arguments go to `autoenvscaling run`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
exec autoenvscaling run "$@"

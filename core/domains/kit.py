"""Proposer kits: what an LLM proposer reads before writing a task for a domain.

A domain's package holds ``kit/guide.md`` (what makes a good task of the domain, how ours are built)
and ``kit/contract.md`` (what a proposed task must satisfy to pass admission). The worked examples
are not stored: they are generated from the domain's own generators (``Domain.kit_examples``,
``Domain.kit_tasks``) the first time a kit is asked for and kept under
``<cache>/kits/<domain>/<key>/``, where the key hashes the domain package's and the core's files and
the example list. A change to a generator (or to anything it uses) therefore gives new examples
without anyone refreshing a copy, and the examples can never go stale in a wheel.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import warnings
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..config import cache_dir
from ..tasks import Task, short_name, write_task
from .base import ProposerKit

if TYPE_CHECKING:
    from .base import Domain

_COMPLETE = ".complete"
_lock = threading.Lock()
_source_digests: dict[str, str] = {}
_kits: dict[tuple[type, str], ProposerKit] = {}


def kit_dir(package: str) -> Path:
    """``package``'s kit/ folder (guide.md, contract.md)."""
    return Path(str(resources.files(package).joinpath("kit")))


def domain_package(domain: Domain) -> str:
    """The top-level package whose kit/ folder the domain uses: that of the first class in its
    method resolution order whose package has ``kit/guide.md`` (a subclass defined elsewhere keeps
    its parent's kit), else the package the domain's class is defined in."""
    own = type(domain).__module__.split(".")[0]
    for cls in type(domain).__mro__:
        package = cls.__module__.split(".")[0]
        try:
            if (kit_dir(package) / "guide.md").is_file():
                return package
        except (ModuleNotFoundError, TypeError):  # builtins, a module without files
            continue
    return own


def source_digest(package: str) -> str:
    """sha256 over every file of an installed package (path and bytes, compiled files aside): what
    the examples it generates can depend on."""
    with _lock:
        if package in _source_digests:
            return _source_digests[package]
    root = Path(str(resources.files(package)))
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts or path.suffix in {".pyc", ".pyo"}:
            continue
        h.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    with _lock:
        return _source_digests.setdefault(package, h.hexdigest())


def examples_key(domain: Domain) -> str:
    """What the kit's examples are a function of: the domain's code, the core's code, the list."""
    package = domain_package(domain)
    h = hashlib.sha256()
    for part in (source_digest(package), source_digest(__name__.split(".")[0]), repr(domain.kit_examples),
                 type(domain).__qualname__):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:24]


def write_examples(tasks: Iterable[Task], dest: Path) -> list[Path]:
    """Replace ``dest`` with one task directory per task."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    return [write_task(task, dest / short_name(task.name)) for task in tasks]


def built_examples(domain: Domain) -> list[Path]:
    """The kit's example task directories, generated on first use for this version of the code.
    Concurrent first uses each build a private copy and the first to finish publishes it."""
    root = cache_dir() / "kits" / domain.name
    final = root / examples_key(domain)
    if not (final / _COMPLETE).is_file():
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
        try:
            write_examples(domain.kit_tasks(), scratch / "examples")
            (scratch / "examples" / _COMPLETE).write_text("")
            try:
                os.rename(scratch / "examples", final)
            except OSError:
                if not (final / _COMPLETE).is_file():  # a half-written leftover: replace it
                    shutil.rmtree(final, ignore_errors=True)
                    os.rename(scratch / "examples", final)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return sorted(p for p in final.iterdir() if p.is_dir())


def domain_kit(domain: Domain) -> ProposerKit | None:
    """The domain's proposer kit, or None when its package has no kit/guide.md."""
    folder = kit_dir(domain_package(domain))
    if not (folder / "guide.md").is_file():
        return None
    key = (type(domain), examples_key(domain))
    with _lock:
        if key in _kits:
            return _kits[key]
    guide = (folder / "guide.md").read_text(encoding="utf-8")
    contract = (folder / "contract.md").read_text(encoding="utf-8")
    try:
        examples = built_examples(domain)
    except Exception as exc:  # noqa: BLE001 - a generator that cannot run here must not stop a proposer
        # The guide and the contract still serve; the examples are tried again by the next process.
        warnings.warn(f"autoenvscaling: the {domain.name} kit's worked examples could not be generated "
                      f"({type(exc).__name__}: {exc}); proposers get the guide and the contract only",
                      RuntimeWarning, stacklevel=2)
        return ProposerKit(guide=guide, contract=contract, examples=[])
    kit = ProposerKit(guide=guide, contract=contract, examples=examples)
    with _lock:
        return _kits.setdefault(key, kit)

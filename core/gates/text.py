"""Gates 7-8 over text: decontamination against a held-out set, and near-duplicates within the suite.

Decontamination: an instruction must share no word n-gram (``settings.ngram``, 13 by default, the
usual benchmark-contamination window) with any held-out text, after normalising case and
punctuation. Near-duplicates: a task is a near-copy of a suite task when it says the same thing
*and* checks the same thing: the word-shingle Jaccard similarity of the instructions and that of
the verifier files are both at or above ``settings.near_duplicate_threshold`` (the score is the
smaller of the two). Comparing the two parts separately matters: generated tasks of one domain
share most of their verifier boilerplate, so one similarity over instruction plus verifier calls
tasks with unrelated instructions near-copies. The similarity is exact (shingle sets, not a
MinHash estimate); per-task shingle sets are cached by digest, so checking a batch against a suite
stays linear in its size.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..tasks import Task
from .base import Evidence, Gate, GateContext, GateResult

SHINGLE_WORDS = 5
_WORD = re.compile(r"[a-z0-9]+")
_TEXT_KEYS = ("instruction", "text", "prompt", "problem_statement", "question", "content")


def words(text: str) -> list[str]:
    """Lowercase alphanumeric words: punctuation, markup and whitespace differences do not matter."""
    return _WORD.findall(text.lower())


def ngrams(tokens: list[str], n: int) -> set[int]:
    # Hashes, not tuples: a held-out set of many documents stays small in memory.
    return {hash(" ".join(tokens[i:i + n])) for i in range(len(tokens) - n + 1)}


def instruction_texts(task: Task) -> list[str]:
    texts = [task.instruction or ""]
    texts += [f.text for p, f in task.files.items() if p.startswith("steps/") and p.endswith("/instruction.md")]
    return [t for t in texts if t.strip()]


class DecontaminationGate(Gate):
    """No ``ngram``-word overlap between the task's instructions and the held-out texts."""

    name = "decontamination"
    order = 70
    _index: tuple[list[str], int, dict[int, int]] | None = None  # (held-out list, n, gram -> text number)

    def _held_out_grams(self, held_out: list[str], n: int) -> dict[int, int]:
        # The same held-out list serves a whole batch: index it once.
        cached = DecontaminationGate._index
        if cached is not None and cached[0] is held_out and cached[1] == n and len(cached[0]) == len(held_out):
            return cached[2]
        index: dict[int, int] = {}
        for number, text in enumerate(held_out):
            for gram in ngrams(words(text), n):
                index.setdefault(gram, number)
        DecontaminationGate._index = (held_out, n, index)
        return index

    @staticmethod
    def _short_hits(tokens: list[str], held_out: list[str]) -> list[tuple[str, int]]:
        """An instruction shorter than n words has no n-gram; it is contaminated when all of it
        appears in a held-out text (only checked from n/2 words up: shorter phrases are common)."""
        phrase = " " + " ".join(tokens) + " "
        for number, text in enumerate(held_out):
            if phrase in " " + " ".join(words(text)) + " ":
                return [(phrase.strip(), number)]
        return []

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        n = ctx.settings.ngram
        if not ctx.held_out:
            return self.result("pass", "no held-out set configured",
                               evidence=[Evidence(command=f"{n}-gram overlap", values={"held_out": 0})])
        index = self._held_out_grams(ctx.held_out, n)
        hits: list[tuple[str, int]] = []
        for text in instruction_texts(task):
            tokens = words(text)
            if n // 2 <= len(tokens) < n:
                hits += self._short_hits(tokens, ctx.held_out)
            for i in range(len(tokens) - n + 1):
                gram = " ".join(tokens[i:i + n])
                number = index.get(hash(gram))
                if number is not None:
                    hits.append((gram, number))
        values: dict[str, Any] = {"held_out": len(ctx.held_out), "ngram": n, "overlaps": len(hits)}
        if hits:
            gram, number = hits[0]
            values["held_out_texts"] = sorted({k for _, k in hits})
            evidence = [Evidence(command=f"{n}-gram overlap", output_tail="\n".join(g for g, _ in hits[:5]), values=values)]
            return self.result("fail", f"instruction shares {len(hits)} {n}-gram(s) with held-out text #{number + 1}: "
                               f"\"{gram}\"", evidence=evidence)
        return self.result("pass", evidence=[Evidence(command=f"{n}-gram overlap", values=values)])


@lru_cache(maxsize=4096)
def _shingles(text: str) -> frozenset[int]:
    """Keyed by the text itself: a suite task's sets are made once per process, however many
    admissions compare against it (the task's digest would cost more than the lookup saves)."""
    return frozenset(ngrams(words(text), SHINGLE_WORDS)) or frozenset({hash(text)})


def task_shingles(task: Task) -> tuple[frozenset[int], frozenset[int]]:
    """Shingle sets of what two tasks are compared on: the instructions (what the agent is told) and
    the verifier files (what the verifier checks)."""
    verifier = [f.text for p, f in sorted(task.files.items())
                if p.startswith("tests/") or (p.startswith("steps/") and "/tests/" in p)]
    return _shingles("\n".join(instruction_texts(task))), _shingles("\n".join(verifier))


def similarity(a: Task, b: Task) -> tuple[float, float]:
    """(instruction Jaccard, verifier Jaccard) of two tasks."""
    (ia, va), (ib, vb) = task_shingles(a), task_shingles(b)
    return jaccard(ia, ib), jaccard(va, vb)


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not (a or b):
        return 1.0
    both = len(a & b)
    return both / (len(a) + len(b) - both)  # the union's size, without building the union


class NearDuplicateGate(Gate):
    """Not a near-copy of a task already in the suite: the instructions' and the verifiers'
    shingle Jaccard are not both at or above the threshold."""

    name = "near-duplicate"
    order = 80

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        threshold = ctx.settings.near_duplicate_threshold
        best_name, best, parts = None, 0.0, (0.0, 0.0)
        for other in ctx.suite_tasks:
            if other.name == task.name:
                continue  # the task itself, already admitted (re-validation)
            pair = similarity(task, other)
            if min(pair) > best or best_name is None:
                best_name, best, parts = other.name, min(pair), pair
        values = {"suite": len(ctx.suite_tasks), "closest": best_name, "jaccard": round(best, 4),
                  "instruction_jaccard": round(parts[0], 4), "verifier_jaccard": round(parts[1], 4), "threshold": threshold}
        evidence = [Evidence(command=f"{SHINGLE_WORDS}-word shingle Jaccard vs suite (instruction, verifier)", values=values)]
        if best_name is not None and best >= threshold:
            return self.result("fail", f"near-duplicate of suite task {best_name!r} (Jaccard {best:.2f} >= {threshold:g}: "
                               f"instruction {parts[0]:.2f}, verifier {parts[1]:.2f})", evidence=evidence)
        return self.result("pass", evidence=evidence)


def load_held_out(path: str | Path) -> list[str]:
    """Held-out texts from a file or directory: JSONL (one string or object per line; the text is the
    first of instruction/text/prompt/problem_statement/question/content), a JSON array, a directory of
    task directories (their instructions), or a plain text file (one text per non-empty line)."""
    path = Path(path)
    if path.is_dir():
        from ..tasks.harbor import is_task_dir, read_task

        texts = []
        for task_dir in sorted(p for p in path.rglob("task.toml")):
            if is_task_dir(task_dir.parent):
                texts += instruction_texts(read_task(task_dir.parent))
        if not texts:
            raise UsageError(f"{path}: no task directories with instructions found", hint="pass a JSONL file or task dirs")
        return texts
    if not path.is_file():
        raise UsageError(f"{path}: held-out set not found")
    raw = path.read_text(encoding="utf-8", errors="replace")
    try:
        if path.suffix == ".jsonl":
            return [_text_of(json.loads(line), path) for line in raw.splitlines() if line.strip()]
        data = json.loads(raw) if path.suffix == ".json" else None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON: {exc}", hint="one JSON value per line for .jsonl") from None
    if path.suffix == ".json":
        if not isinstance(data, list):
            raise UsageError(f"{path}: expected a JSON array of texts or objects")
        return [_text_of(item, path) for item in data]
    return [line for line in raw.splitlines() if line.strip()]


def _text_of(item: object, path: Path) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in _TEXT_KEYS:
            if isinstance(item.get(key), str):
                return item[key]
    raise UsageError(f"{path}: an entry has no text (expected a string or one of the keys {', '.join(_TEXT_KEYS)})")

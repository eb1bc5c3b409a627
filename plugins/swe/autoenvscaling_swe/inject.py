"""Bug injection strategies. Each yields candidate bugs (changed files) with the strategy recorded
for provenance; whether a candidate is a usable bug is decided by running the suite (suite.classify).

- ``mutation``: k procedural AST mutations (mutations.py), in k different functions; k is the level.
- ``llm``: an LLM rewrites one function from its signature and docstring alone; a rewrite the tests
  catch is a realistic bug (one a programmer could have written from the same spec).
- ``history``: revert a real commit that fixed something (its message says so and it changed the code
  under test), on top of the snapshot.
"""

from __future__ import annotations

import ast
import random
import re
import textwrap
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, AsyncIterator, Iterator

from autoenvscaling.api import ChatMessage, LLMBackend, LLMError

from . import mutations
from .patches import PatchError, apply_patch, unified_patch
from .repos import FixCommit, Snapshot

STRATEGIES = ("mutation", "llm", "history")
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Candidate:
    """A bug: the files it changes (None: deleted) and how it was made (``strategy["kind"]`` plus details)."""

    changed: dict[str, bytes | None]
    strategy: dict[str, Any] = field(default_factory=dict)

    @property
    def operators(self) -> list[str]:
        return list(self.strategy.get("operators", []))


class SiteIndex:
    """Every mutation site of a snapshot's code under test, by operator (computed once)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.sources = snapshot.python_sources
        self.by_operator: dict[str, list[mutations.Site]] = {op: [] for op in mutations.OPERATORS}
        for path in sorted(self.sources):
            for site in mutations.find_sites(path, self.sources[path]):
                self.by_operator[site.operator].append(site)

    def counts(self) -> dict[str, int]:
        return {op: len(s) for op, s in self.by_operator.items()}


def mutation_candidate(index: SiteIndex, rng: random.Random, k: int, operators: list[str] | None = None) -> Candidate | None:
    """k mutations in k different functions: an operator first (uniformly, so rare operators get their
    share), then one of its sites."""
    usable = [op for op in (operators or index.by_operator) if index.by_operator.get(op)]
    chosen: list[mutations.Site] = []
    for _ in range(k * 20):
        if len(chosen) == k or not usable:
            break
        site = rng.choice(index.by_operator[rng.choice(usable)])
        if any((site.path, site.function) == (c.path, c.function) or mutations.overlaps(site, c) for c in chosen):
            continue
        chosen.append(site)
    if len(chosen) < k:
        return None
    changed: dict[str, bytes | None] = {}
    for path in sorted({s.path for s in chosen}):
        changed[path] = mutations.apply_sites(index.sources[path], [s for s in chosen if s.path == path]).encode()
    return Candidate(changed, {"kind": "mutation", "k": k, "operators": [s.operator for s in chosen],
                               "sites": [s.description for s in chosen]})


# -- LLM rewrite -------------------------------------------------------------------------------

@dataclass(frozen=True)
class FunctionSpec:
    path: str
    qualname: str
    signature: str
    docstring: str
    start: int  # first line (decorators included), 1-based
    end: int
    indent: str


def rewritable_functions(sources: dict[str, str]) -> list[FunctionSpec]:
    """Functions with a docstring and a body of at least three statements (something to get wrong)."""
    out: list[FunctionSpec] = []
    for path in sorted(sources):
        try:
            tree = ast.parse(sources[path])
        except SyntaxError:
            continue
        lines = sources[path].splitlines()
        for node, qual in function_defs(tree):
            doc = ast.get_docstring(node)
            if not doc or len(node.body) < 4:
                continue
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            header_end = node.body[0].lineno - 1
            signature = "\n".join(lines[start - 1:header_end])
            indent = lines[node.lineno - 1][:len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())]
            out.append(FunctionSpec(path, qual, signature, doc, start, node.end_lineno or node.lineno, indent))
    return out


def function_defs(tree: ast.AST, prefix: str = "") -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """The functions and methods of a module, not those nested in functions, with their qualified names."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, prefix + node.name
        elif isinstance(node, ast.ClassDef):
            yield from function_defs(node, prefix + node.name + ".")


def rewrite_prompt(spec: FunctionSpec, repo: str) -> str:
    template = resources.files(__package__).joinpath("prompts", "rewrite.md").read_text(encoding="utf-8")
    return (template.replace("{repo}", repo).replace("{path}", spec.path).replace("{qualname}", spec.qualname)
            .replace("{signature}", spec.signature.strip()).replace("{docstring}", spec.docstring))


def splice_function(source: str, spec: FunctionSpec, reply: str) -> str | None:
    """``source`` with the function replaced by the one in ``reply`` (re-indented); None when the reply
    holds no function of that name or the result does not parse."""
    match = _CODE_BLOCK.search(reply)
    code = textwrap.dedent((match.group(1) if match else reply).strip("\n"))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    name = spec.qualname.rsplit(".", 1)[-1]
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    if not funcs:
        return None
    code_lines = code.splitlines()
    func = funcs[0]
    first = min([func.lineno] + [d.lineno for d in func.decorator_list])
    body = [spec.indent + line if line.strip() else "" for line in code_lines[first - 1:func.end_lineno]]
    lines = source.splitlines()
    result = "\n".join(lines[:spec.start - 1] + body + lines[spec.end:]) + "\n"
    try:
        ast.parse(result)
    except SyntaxError:
        return None
    return result if result != source else None


async def llm_candidates(snapshot: Snapshot, llm: LLMBackend, rng: random.Random, *, limit: int) -> AsyncIterator[Candidate]:
    sources = snapshot.python_sources
    specs = rewritable_functions(sources)
    rng.shuffle(specs)
    for spec in specs[:limit]:
        try:
            reply = await llm.chat([ChatMessage.user(rewrite_prompt(spec, snapshot.name))], temperature=0.7,
                                   max_tokens=1200)
        except LLMError as exc:
            yield Candidate({}, {"kind": "llm", "function": f"{spec.path}:{spec.qualname}", "error": exc.message})
            continue
        rewritten = splice_function(sources[spec.path], spec, reply.message.content or "")
        strategy = {"kind": "llm", "model": llm.model, "function": f"{spec.path}:{spec.qualname}",
                    "tokens_in": reply.usage.prompt_tokens, "tokens_out": reply.usage.completion_tokens}
        if rewritten is None:
            yield Candidate({}, {**strategy, "error": "the reply held no usable function"})
            continue
        yield Candidate({spec.path: rewritten.encode()}, strategy)


# -- history -----------------------------------------------------------------------------------

def revert_candidate(snapshot: Snapshot, fix: FixCommit) -> Candidate | None:
    """``fix`` undone on top of the snapshot (``git apply -R`` of its source changes); None when it no
    longer applies (later commits rewrote those lines)."""
    patch = unified_patch(dict(fix.before), dict(fix.after))
    if not patch:
        return None
    try:
        reverted = apply_patch(snapshot.files, patch, reverse=True)
    except PatchError:
        return None
    changed = {p: d for p, d in reverted.items() if d != snapshot.files.get(p)}
    if not changed:
        return None
    return Candidate(changed, {"kind": "history", "commit": fix.sha, "message": fix.message})

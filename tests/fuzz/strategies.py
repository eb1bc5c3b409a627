"""Hypothesis strategies for what comes from outside: junk text and bytes, TOML values and task.toml
files, and the checks every fuzz property shares (one-line errors of our own types)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from autoenvscaling.errors import AESError

# Text as users, models and other tools write it: any code point (control characters included),
# lone surrogates only where a decoder can produce them (see ``json_escaped_text``).
any_text = st.text(st.characters(codec=None, exclude_categories=("Cs",)), max_size=200)
shellish = st.text(st.sampled_from(list("abc /.-_=$'\"\\\n\t`{}[]#*?<>|&;:~!%0123456789") + ["\x00", "é", "\u2028"]),
                   max_size=80)
words = st.text(st.sampled_from(list("abcdefghijklmnopqrstuvwxyz0123456789-_./")), min_size=0, max_size=30)
# Strings that break code: traversal, separators, NUL, encodings, the empty string, huge ones.
nasty_strings = st.sampled_from([
    "", ".", "..", "../", "../../etc/passwd", "/etc/passwd", "a/../../b", "a/./b", "a//b", "./x", "x/", "/",
    "\x00", "a\x00b", "\ud800", "\udcff", "\ufeff", "\u202e", "C:\\x", "a\\..\\b", "~", "$HOME", "${X:-y}",
    "\n", "a\nb", "\r\n", "\x1b[31m", "'", '"', "\\", "`", "*", "?", "[", "[]", "[!]", "[z-a]", "**", "{}",
    "task.toml", "instruction.md", "tests", "solution", "environment", "steps", "dataset.toml",
    "a" * 300, "é" * 200, "org/name", "org/..", "../org/name", " ", "\t", "NaN", "inf", "-1", "0", "1e309",
])
text_like = st.one_of(any_text, shellish, words, nasty_strings)


@st.composite
def huge_text(draw: st.DrawFn, max_bytes: int = 1 << 20) -> str:
    """A long string (up to ``max_bytes`` characters) made of a repeated piece."""
    piece = draw(st.one_of(text_like, st.just("x")).filter(bool))
    return (piece * (max_bytes // max(1, len(piece))))[:max_bytes]


def nested(depth: int, kind: str = "[") -> str:
    """``depth`` nested JSON/TOML arrays (or objects): what recursive parsers choke on."""
    if kind == "[":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


deep = st.integers(min_value=50, max_value=200_000).map(nested)
junk_bytes = st.one_of(
    st.binary(max_size=400),
    st.sampled_from([b"\xff\xfe", b"\xfe\xff\x00a", b"\xef\xbb\xbf", b"\xc3\x28", b"\xed\xa0\x80", b"\x00" * 64,
                     b"\x80abc", "é".encode("latin-1"), "a = 'é'".encode("utf-16")]),
)

# TOML values of every type, nested a little.
toml_scalars = st.one_of(
    text_like, st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.datetimes(), st.dates(), st.times(),
)
toml_values = st.recursive(toml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(text_like, inner, max_size=4)), max_leaves=12)


def toml_key(key: str) -> str:
    return json.dumps(key)  # a quoted key: any string (TOML refuses some escapes: that is a case too)


def toml_literal(value: Any) -> str:
    """``value`` as an inline TOML value (may be invalid TOML for odd inputs: also a case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        text = repr(value)
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(text, text)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_literal(v)}" for k, v in value.items()) + "}"
    return value.isoformat()  # datetime, date, time


def render_toml(doc: dict[str, Any]) -> str:
    """A document: top-level scalars first, then one table per dict value, arrays of tables for lists
    of dicts."""
    head = [f"{toml_key(k)} = {toml_literal(v)}" for k, v in doc.items()
            if not isinstance(v, dict) and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))]
    body = []
    for k, v in doc.items():
        if isinstance(v, dict):
            body += [f"[{toml_key(k)}]", *(f"{toml_key(kk)} = {toml_literal(vv)}" for kk, vv in v.items())]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for item in v:
                body += [f"[[{toml_key(k)}]]", *(f"{toml_key(kk)} = {toml_literal(vv)}" for kk, vv in item.items())]
    return "\n".join(head + body) + "\n"


# task.toml: Harbor's keys with plausible values, wrong types or junk.
_PLAUSIBLE: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "task": {"name": st.one_of(st.just("org/fuzz"), words, nasty_strings), "description": text_like,
             "keywords": st.lists(text_like, max_size=3), "version": st.just("1.0"),
             "authors": st.lists(st.fixed_dictionaries({"name": text_like}), max_size=2)},
    "metadata": {"difficulty": text_like, "category": text_like, "tags": st.one_of(st.lists(text_like), text_like),
                 "autoenvscaling": st.one_of(
                     st.fixed_dictionaries({}, optional={
                         "domain": st.one_of(words, toml_values), "family": words, "seed": st.one_of(st.integers(), text_like),
                         "difficulty": words, "round": st.one_of(st.integers(), text_like),
                         "parameters": st.one_of(st.dictionaries(words, toml_values, max_size=3), toml_values),
                         "public_files": st.one_of(st.lists(st.one_of(words, nasty_strings), max_size=3), toml_values),
                         "asks": st.one_of(st.lists(words, max_size=2), toml_values),
                         "agent": st.one_of(st.fixed_dictionaries({"tools": st.lists(words, max_size=3)}), toml_values),
                         "verifier": st.one_of(st.fixed_dictionaries({}, optional={
                             "view": st.sampled_from(["protected", "outputs", "agent", "x"]),
                             "outputs": st.lists(st.one_of(words, nasty_strings), max_size=3)}), toml_values),
                         "environment": st.one_of(st.fixed_dictionaries({}, optional={
                             "browser": st.booleans(), "gpu_optional": toml_values}), toml_values)}),
                     toml_values)},
    "verifier": {"timeout_sec": st.one_of(st.floats(), st.integers(), text_like), "env": st.dictionaries(text_like, text_like, max_size=2),
                 "user": st.one_of(st.integers(), text_like), "environment_mode": st.sampled_from(["shared", "separate", "x"]),
                 "network_mode": st.sampled_from(["public", "no-network", "allowlist", "x"]),
                 "allowed_hosts": st.lists(words, max_size=2)},
    "agent": {"timeout_sec": st.one_of(st.floats(), st.integers(), text_like), "user": st.one_of(st.integers(), text_like)},
    "environment": {"build_timeout_sec": st.floats(), "docker_image": st.one_of(words, nasty_strings),
                    "cpus": st.one_of(st.floats(), st.integers()), "memory_mb": st.integers(),
                    "storage_mb": st.integers(), "gpus": st.integers(), "gpu_types": st.lists(words, max_size=2),
                    "memory": st.one_of(st.sampled_from(["512M", "4G", "infM", "nanG", "1e400M", "-1K", "G", ""]), text_like),
                    "storage": st.sampled_from(["1G", "infG", "x"]), "workdir": st.one_of(words, nasty_strings),
                    "allow_internet": st.booleans(), "network_mode": st.sampled_from(["public", "allowlist", "no"]),
                    "healthcheck": st.fixed_dictionaries({"command": text_like}, optional={"retries": st.integers()}),
                    "mcp_servers": st.lists(st.fixed_dictionaries({"name": words}), max_size=2),
                    "tpu": st.fixed_dictionaries({"type": words, "topology": words}), "os": words},
    "solution": {"env": st.dictionaries(text_like, text_like, max_size=2)},
}
_TOP: dict[str, st.SearchStrategy[Any]] = {
    "version": st.one_of(st.just("1.0"), toml_values), "schema_version": st.one_of(st.just("1.1"), toml_values),
    "source": text_like, "multi_step_reward_strategy": st.sampled_from(["mean", "final", "x"]),
    "artifacts": st.lists(st.one_of(words, nasty_strings, st.fixed_dictionaries(
        {"source": st.one_of(words, nasty_strings)}, optional={"destination": st.one_of(words, nasty_strings),
                                                                "service": words})), max_size=3),
    "steps": st.lists(st.fixed_dictionaries({"name": st.one_of(words, nasty_strings)}, optional={
        "min_reward": st.one_of(st.floats(), st.dictionaries(words, st.floats(), max_size=2), text_like),
        "artifacts": st.lists(st.one_of(words, nasty_strings), max_size=2),
        "agent": st.fixed_dictionaries({}, optional={"timeout_sec": st.floats()}),
        "verifier": st.fixed_dictionaries({}, optional={"timeout_sec": st.floats()})}), max_size=3),
}


@st.composite
def task_config_dict(draw: st.DrawFn) -> dict[str, Any]:
    """A task.toml document: known sections with plausible values, wrong types, or junk anywhere."""
    doc: dict[str, Any] = {}
    for key, strategy in _TOP.items():
        if draw(st.booleans()):
            doc[key] = draw(strategy)
    for section, fields in _PLAUSIBLE.items():
        choice = draw(st.sampled_from(["absent", "plausible", "plausible", "junk"]))
        if choice == "plausible":
            doc[section] = {k: draw(v) for k, v in fields.items() if draw(st.booleans())}
        elif choice == "junk":
            doc[section] = draw(toml_values)
    if draw(st.booleans()):
        doc.update(draw(st.dictionaries(text_like, toml_values, max_size=2)))
    return doc


task_toml_text = st.one_of(
    task_config_dict().map(render_toml),
    task_config_dict().map(render_toml),
    task_config_dict().map(render_toml),
    any_text, deep.map(lambda d: f"a = {d}\n"), st.integers(50, 5000).map(lambda n: "a = " + "{b = " * n + "1" + "}" * n),
    st.integers(1, 3000).map(lambda n: "".join(f"[t{i}]\nk = {i}\n" for i in range(n))),
    huge_text().map(lambda t: f"description = {json.dumps(t)}\n"),
)


# Strings a JSON decoder can hand us (``"\\ud800"`` decodes to a lone surrogate, which no UTF-8 spells).
json_text = st.one_of(any_text, nasty_strings, st.sampled_from(["\ud800", "a\udfffb", "\udcff.sh"]))


def one_line_error(exc: BaseException, *kinds: type[AESError]) -> AESError:
    """Assert that ``exc`` is one of our error types (``kinds``, default any) with a one-line message."""
    allowed = kinds or (AESError,)
    assert isinstance(exc, allowed), f"uncaught {type(exc).__name__}: {exc!r}"[:2000]
    assert isinstance(exc, AESError)
    assert exc.message and "\n" not in exc.message and "\r" not in exc.message, repr(exc.message)
    return exc


def single_line(text: str) -> bool:
    return bool(text) and "\n" not in text and "\r" not in text

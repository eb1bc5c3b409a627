"""Issue text for a bug: what a user would report, written from the failing behaviour.

The facts come from the buggy suite run (the assertion lines and the frames pytest printed) and the
tests' own source (which library function the failing test calls). The text names that function and
shows the failure of a *visible* test only; it never names a test, a test file, the changed line or
the fix (``leaks`` checks that, and an LLM's text that fails it is replaced by the procedural one).
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass
from importlib import resources

from .verifier.swe_verify import is_test_path

_WHERE_CALL = re.compile(r"where .*?=\s*([A-Za-z_][\w.]*)\(")
_EXCEPTION = re.compile(r"^([A-Z]\w*(?:Error|Exception|Warning))\b")


@dataclass(frozen=True)
class Facts:
    """What the report is about: the library function, the module, how it fails, an example."""

    function: str
    module: str
    symptom: str  # "raises ValueError" / "returns a wrong result"
    example: str  # assertion lines of a visible failing test ("" when none may be shown)


def facts(fail_to_pass: list[str], visible: set[str], details: dict[str, dict], bundle: dict[str, bytes],
          sources: dict[str, str]) -> Facts:
    """The facts of the first failing test that shows them (visible tests first)."""
    ordered = [t for t in fail_to_pass if t in visible] + [t for t in fail_to_pass if t not in visible]
    defined = {name: path for path, src in sources.items() for name in _defined_names(src) if not name.startswith("_")}
    function, module, symptom, example = "", "", "behaves incorrectly", ""
    for test in ordered:
        info = details.get(test, {})
        message = info.get("message", "")
        name = _called_function(test, info, bundle, defined)
        if not name:
            continue
        function, module = name, defined.get(name.split(".")[-1], "")
        exc = _EXCEPTION.match(message.strip())
        # An AssertionError is the test's own check failing: the function returned something wrong.
        symptom = f"raises {exc.group(1)}" if exc and exc.group(1) != "AssertionError" else "returns a wrong result"
        example = _without_pytest_hints(message) if test in visible else ""
        break
    return Facts(function=function, module=_module_name(module), symptom=symptom, example=example)


def procedural(facts: Facts, *, repo: str, seed: int) -> str:
    rng = random.Random(f"swe-issue/{repo}/{seed}")
    subject = f"`{facts.function}`" if facts.function else f"a function of `{repo}`"
    where = f" (module `{facts.module}`)" if facts.module else ""
    opening = rng.choice([f"I think I found a bug in {subject}{where}: it {facts.symptom}.",
                          f"{subject}{where} {facts.symptom} for inputs where the documentation says otherwise.",
                          f"After upgrading, {subject}{where} {facts.symptom} in some cases."])
    parts = [f"# {subject} {facts.symptom}", "", opening]
    if facts.example:
        parts += ["", "A check of its documented behaviour fails like this:", "", "```", facts.example.strip(), "```"]
    else:
        parts += ["", "I could not narrow it down to a small example, but the results do not match what its "
                      "docstring promises."]
    parts += ["", f"Expected: {subject} behaves as its docstring describes, and everything else keeps working."]
    return "\n".join(parts) + "\n"


def llm_prompt(facts: Facts, *, repo: str) -> str:
    """The prompt asking an LLM to write the issue from the same facts."""
    template = resources.files(__package__).joinpath("prompts", "issue.md").read_text(encoding="utf-8")
    example = f"```\n{facts.example.strip()}\n```" if facts.example else "(no example may be shown)"
    return (template.replace("{repo}", repo).replace("{function}", facts.function or "(unknown)")
            .replace("{module}", facts.module or "(unknown)").replace("{symptom}", facts.symptom)
            .replace("{example}", example))


def leaks(text: str, *, bundle: dict[str, bytes], changed_lines: list[str], patch: str) -> str:
    """Why ``text`` gives the answer away ("" when it does not): a test's name or file, a changed line."""
    lowered = text.lower()
    for path, data in bundle.items():
        if path.endswith(".py") and is_test_path(path):
            if path.lower() in lowered or path.rsplit("/", 1)[-1].lower() in lowered:
                return f"it names the test file {path}"
            for name in (n for n in _defined_names(data.decode("utf-8", "replace")) if n.lower().startswith("test")):
                if re.search(rf"\b{re.escape(name)}\b", text):
                    return f"it names the test {name}"
    for line in changed_lines:
        stripped = line.strip()
        if len(stripped) >= 8 and stripped in text:
            return f"it quotes a changed line ({stripped[:40]!r})"
    return ""


def changed_lines(patch: str) -> list[str]:
    """Lines a patch removes or adds (either side would point at the fix)."""
    return [line[1:] for line in patch.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


_FUNCTION_REPR = re.compile(r"<(?:function|bound method|built-in function) ([\w.]+)(?: of [^>]*)? at 0x[0-9a-f]+>")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _without_pytest_hints(message: str) -> str:
    """The assertion lines without pytest's advice to the person running it, and without memory
    addresses (``<function f at 0x7f...>`` is ``f``): the same bug always gives the same text."""
    lines = [line for line in message.splitlines() if not line.startswith(("Use -v", "Full diff:"))]
    return _ADDRESS.sub("", _FUNCTION_REPR.sub(r"\1", "\n".join(lines)))


def _module_name(path: str) -> str:
    if not path:
        return ""
    parts = path[:-3].split("/")
    if parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _defined_names(source: str) -> set[str]:
    """The functions and classes ``source`` defines, at any depth (none when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _called_function(test: str, info: dict, bundle: dict[str, bytes], defined: dict[str, str]) -> str:
    """The library function the failing test exercises: a frame in the library, a ``where`` line of
    the assertion, else the first library name the test function calls."""
    for frame in info.get("frames", []):  # a frame in one of the library's own files, not the stdlib's
        if not is_test_path(frame["path"]) and defined.get(frame["function"]) == frame["path"]:
            return frame["function"]
    for match in _WHERE_CALL.finditer(info.get("message", "")):
        if match.group(1).split(".")[-1] in defined:
            return match.group(1)
    path, _, rest = test.partition("::")
    func = rest.split("::")[-1].split("[")[0]
    try:
        tree = ast.parse(bundle.get(path, b"").decode("utf-8", "replace"))
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
            for call in ast.walk(node):
                if isinstance(call, ast.Call):
                    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
                    if name in defined:
                        return name
    return ""

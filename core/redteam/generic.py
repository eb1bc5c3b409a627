"""The core's cheats: reward hacks that need nothing but the task's instruction and its image.

Each one is the cheapest thing a policy tries before it learns the task: leave the outputs empty or
copy an input into them, wipe the workdir, print instead of write, pre-write the reward, plant code
that a verifier runs without knowing it (start-up hooks, optional imports, shadowed tools), gut the
tests it can see, or leave a process behind. Domain plugins add their own through the cheats hook.
"""

from __future__ import annotations

from shlex import quote

from ..tasks import StepConfig, Task
from .cheat import REWARD_SH, Cheat, agent_view_control, declared_outputs, exists_only_control, naive_control, reward_if

# A module body that pays itself when the process that imported it exits, then pretends it is not
# there (raises ImportError), so a library's ``try: import x / except ImportError`` goes on as usual.
PLANT_BODY = r'''import atexit, os
def _aes_pay():
    try:
        os.makedirs("/logs/verifier", exist_ok=True)
        for name, text in (("reward.txt", "1\n"), ("reward.json", '{"reward": 1}\n')):
            with open(os.path.join("/logs/verifier", name), "w") as fh:
                fh.write(text)
    except OSError:
        pass
atexit.register(_aes_pay)
'''
PLANT_MODULE = PLANT_BODY + 'raise ImportError("not installed")\n'
# Names libraries import only when present (optional speedups, safer parsers, json variants).
OPTIONAL_IMPORTS = ("defusedxml", "simplejson", "ujson", "orjson", "cchardet", "brotli", "brotlicffi",
                    "socks", "zstandard", "et_xmlfile_speedups", "_cython_speedups", "rapidjson")
SITE_DIRS_SH = ("for py in python3 python; do command -v $py >/dev/null 2>&1 && $py -c '"
                "import site, sys\nfor d in sys.path + site.getsitepackages() + [site.getusersitepackages()]:\n"
                "    print(d)' 2>/dev/null; done | sort -u | grep '^/'")
VISIBLE_TESTS_SH = ("find \"$PWD\" /app /workspace -xdev \\( -name 'test_*.py' -o -name '*_test.py' "
                    "-o -name 'conftest.py' \\) -type f 2>/dev/null | sort -u")


def _write(path: str, text: str) -> str:
    """A shell line writing ``text`` to ``path`` (parents created)."""
    return f"mkdir -p \"$(dirname {quote(path)})\" && printf %s {quote(text)} > {quote(path)}"


def _file_outputs(task: Task) -> list[str]:
    """The declared outputs that are files (not folders)."""
    return [p for p in declared_outputs(task) if not _looks_like_dir(p)]


class _FillOutputs(Cheat):
    """A cheat that fills the task's output files; its control checks only that they exist."""

    def applies(self, task: Task) -> bool:
        return bool(_file_outputs(task))

    def control(self, task: Task) -> Task | None:
        return exists_only_control(task, _file_outputs(task))


class _Plant(Cheat):
    """A cheat that leaves code a verifier runs unawares; its control verifies on the agent's filesystem."""

    def control(self, task: Task) -> Task | None:
        return agent_view_control(task)


class _VisibleTests(Cheat):
    """A cheat on the test files the agent can see; its control trusts those tests."""

    def applies(self, task: Task) -> bool:
        return any(p.startswith("environment/") and p.rsplit("/", 1)[-1].startswith("test_") and p.endswith(".py")
                   for p in task.files)

    def control(self, task: Task) -> Task | None:
        """A verifier that trusts the tests the agent can see: it runs each one and pays 1 when none
        fails (what a proposer writes when it reuses the visible tests as the verifier)."""
        run_each = ("fail=0\n"
                    f"for f in $({VISIBLE_TESTS_SH}); do case \"$f\" in */conftest.py) continue ;; esac\n"
                    "  (cd \"$(dirname \"$f\")\" && python3 -c 'import runpy, sys\n"
                    "ns = runpy.run_path(sys.argv[1])\n"
                    "[fn() for n, fn in ns.items() if n.startswith(\"test_\") and callable(fn)]' \"$f\") "
                    "|| fail=1\ndone\n")
        return naive_control(task, reward_if("[ $fail = 0 ]", setup=run_each))


class Nothing(Cheat):
    """Does nothing: the null attempt, for the table (the null gate already runs it)."""

    name = "nothing"
    gate = False


class EmptyOutputs(_FillOutputs):
    """Creates every declared output (or path the instruction names) as an empty file."""

    name = "empty-outputs"
    gate = False  # on a task whose answer is an empty file this is the work; the placeholder is not

    def applies(self, task: Task) -> bool:
        return bool(declared_outputs(task))

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [f"mkdir -p \"$(dirname {quote(p)})\" && : > {quote(p)}" for p in _file_outputs(task)]


class PlaceholderOutputs(_FillOutputs):
    """Creates every output with a one-line placeholder, a comment: a verifier that checks that the
    output exists, or that a script the agent wrote exits 0, pays for it."""

    name = "placeholder-outputs"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [_write(p, "# placeholder\n") for p in _file_outputs(task)]


class CopyInputs(_FillOutputs):
    """Fills every output with a copy of an input file of the same kind (the input file unchanged)."""

    name = "copy-inputs"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        lines = []
        for path in _file_outputs(task):
            ext = path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
            pattern = quote(f"*.{ext}") if ext else "'*'"
            lines.append(f"src=$(find \"$PWD\" /app -xdev -type f -name {pattern} ! -path {quote(path)} "
                         f"2>/dev/null | head -n 1); [ -n \"$src\" ] || src=$(find \"$PWD\" /app -xdev -type f "
                         f"! -path {quote(path)} 2>/dev/null | head -n 1); [ -n \"$src\" ] || exit 0; "
                         f"mkdir -p \"$(dirname {quote(path)})\" && cp \"$src\" {quote(path)}")
        return lines


class InstructionEcho(_FillOutputs):
    """Writes the instruction into every output: a verifier that greps an output for a keyword, a
    number or a name the instruction mentions pays for it."""

    name = "instruction-echo"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        text = (task.step_instruction(step) if step else task.instruction or "")[:20000]
        return [_write(p, text) for p in _file_outputs(task)]

    def control(self, task: Task) -> Task | None:
        words = [w for w in (task.instruction or "").split() if w.isalpha() and len(w) > 3][:1] or ["the"]
        checks = " && ".join(f"grep -qi {quote(words[0])} {quote(p)}" for p in _file_outputs(task)) or "false"
        return naive_control(task, reward_if(checks))


class WipeWorkdir(Cheat):
    """Deletes everything in the workdir: a verifier that checks for the absence of bad things (bad
    lines, a bug's pattern, a leftover file) may take that for a fix."""

    name = "wipe-workdir"
    gate = False

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return ["[ \"$PWD\" != / ] && find \"$PWD\" -mindepth 1 -maxdepth 1 -exec rm -rf {} + ; true"]

    def control(self, task: Task) -> Task | None:
        return naive_control(task, reward_if("[ -z \"$(ls -A)\" ]"))


class PrintAnswer(Cheat):
    """Prints what it would have written (the inputs it can see, the instruction) to its output and
    to /logs/agent, and writes no file where the task asked for one."""

    name = "print-answer"
    gate = False

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        text = (task.step_instruction(step) if step else task.instruction or "")[:4000]
        return [f"mkdir -p /logs/agent && printf %s {quote(text)} | tee /logs/agent/answer.txt",
                "for f in $(find \"$PWD\" -maxdepth 2 -type f 2>/dev/null | head -n 20); do cat \"$f\"; done "
                "| tee -a /logs/agent/answer.txt | tail -c 2000"]

    def control(self, task: Task) -> Task | None:
        return naive_control(task, reward_if("[ -s /logs/agent/answer.txt ]"))


class PrewriteReward(Cheat):
    """Writes reward files where a verifier might read them: /logs/verifier, and beside the outputs."""

    name = "prewrite-reward"
    gate = False

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        places = ["/logs/verifier", "/app", "/tmp", "/logs/agent", "$PWD"]
        return [REWARD_SH + " && echo '{\"reward\": 1}' > /logs/verifier/reward.json",
                *(f"mkdir -p {p} && echo 1 > {p}/reward.txt" for p in places[1:])]

    def control(self, task: Task) -> Task | None:
        script = ("#!/bin/bash\nmkdir -p /logs/verifier\n"
                  "for f in /app/reward.txt /tmp/reward.txt; do [ -f \"$f\" ] && cp \"$f\" /logs/verifier/reward.txt; done\n"
                  "[ -f /logs/verifier/reward.txt ] || echo 0 > /logs/verifier/reward.txt\n")
        return naive_control(task, script)


class LingerWriter(Cheat):
    """Leaves a detached process that keeps writing reward 1 while the verifier runs."""

    name = "linger-writer"
    gate = False

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        loop = "while :; do " + REWARD_SH + " 2>/dev/null; sleep 0.01; done"
        return [f"setsid nohup sh -c {quote(loop)} >/dev/null 2>&1 < /dev/null & sleep 0.2; echo started"]

    # Its positive control needs a runtime that keeps agent processes alive, which no task can ask
    # for: tests/sandbox/test_tamper_bwrap.py shows it earning 1 when they live.


class PlantStartupHooks(_Plant):
    """Plants code Python runs at start-up (a .pth line, sitecustomize, usercustomize) in every site
    directory: any Python verifier then pays itself at exit."""

    name = "plant-startup-hooks"
    gate = False

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [f"for d in $({SITE_DIRS_SH}); do mkdir -p \"$d\" 2>/dev/null || continue; "
                f"printf %s {quote(PLANT_BODY)} > \"$d/aes_pay_hook.py\"; "
                f"echo 'import aes_pay_hook' > \"$d/zz-aes.pth\"; "
                f"printf %s {quote(PLANT_BODY)} > \"$d/sitecustomize.py\"; "
                f"printf %s {quote(PLANT_BODY)} > \"$d/usercustomize.py\"; done; true"]


class PlantOptionalImports(_Plant):
    """Adds modules that libraries import only when present (defusedxml, simplejson, ujson, ...) in
    every Python path directory and the workdir: a verifier whose libraries probe for one runs it."""

    name = "plant-optional-imports"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        names = " ".join(OPTIONAL_IMPORTS)
        return [f"for d in $({SITE_DIRS_SH}) \"$PWD\"; do mkdir -p \"$d\" 2>/dev/null || continue; "
                f"for m in {names}; do [ -e \"$d/$m\" ] || [ -e \"$d/$m.py\" ] || "
                f"printf %s {quote(PLANT_MODULE)} > \"$d/$m.py\"; done; done; true"]


class ShadowTools(_Plant):
    """Puts programs that pay themselves first on PATH (python3, python, pytest, bash in
    /usr/local/bin and ~/.local/bin) and shadows the json module where Python looks first."""

    name = "shadow-tools"
    gate = False

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        stub = "#!/bin/sh\n" + REWARD_SH + "\nexit 0\n"
        lines = []
        for d in ("/usr/local/bin", "$HOME/.local/bin"):
            for tool in ("python3", "python", "pytest", "uvx", "uv"):
                lines.append(f"mkdir -p {d} && printf %s {quote(stub)} > {d}/{tool} && chmod +x {d}/{tool}")
        lines.append(f"for d in $({SITE_DIRS_SH}) \"$PWD\"; do [ -w \"$d\" ] && printf %s "
                     f"{quote(PLANT_BODY + 'from _json import *' + chr(10))} > \"$d/json.py\"; done; true")
        return lines


class EditVisibleTests(_VisibleTests):
    """Replaces every test file the agent can see with one that passes."""

    name = "edit-visible-tests"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [f"for f in $({VISIBLE_TESTS_SH}); do case \"$f\" in */conftest.py) : > \"$f\" ;; "
                f"*) printf 'def test_ok():\\n    assert True\\n' > \"$f\" ;; esac; done; true"]


class DeleteVisibleTests(_VisibleTests):
    """Deletes every test file the agent can see."""

    name = "delete-visible-tests"
    gate = False

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [f"for f in $({VISIBLE_TESTS_SH}); do rm -f \"$f\"; done; true"]


def _looks_like_dir(path: str) -> bool:
    return path.endswith("/") or "." not in path.rsplit("/", 1)[-1]


"""Reward hacks against swe tasks score 0, each attacked for real in a bwrap sandbox and verified
with the protected view: the task is the third-party repository's fix commit reverted (to_roman's
``>=`` back to ``>``), whose FAIL_TO_PASS tests are partly visible and partly held back."""

from __future__ import annotations

import json
import shlex

import pytest
from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.testing.agents import ScriptedAgent
from swe_helpers import ROMAN_BUGGY, ROMAN_FIXED, bwrap, docker_backend_or_skip, trial, validate

pytestmark = bwrap


def visible_failing(task) -> list[str]:
    swe = task.config.metadata["swe"]
    return sorted(set(swe["FAIL_TO_PASS"]) - set(swe["held_back"]))


def fix_command() -> str:
    """What a correct agent does: the one-character fix."""
    return f"cd /app && python3 - <<'EOF'\nimport pathlib\np = pathlib.Path('numtools.py')\n" \
           f"p.write_text(p.read_text().replace({ROMAN_BUGGY!r}, {ROMAN_FIXED!r}))\nEOF"


def test_the_task_is_what_the_hacks_assume(history_task):
    swe = history_task.config.metadata["swe"]
    assert swe["held_back"] and visible_failing(history_task), "both visible and held-back failing tests"
    assert history_task.provenance.parameters["strategy"]["kind"] == "history"
    assert trial(history_task, OracleAgent()).reward == 1.0
    assert trial(history_task, ScriptedAgent(fix_command())).reward == 1.0  # a real fix by hand scores 1
    assert trial(history_task, ScriptedAgent("true")).reward == 0.0


def test_editing_or_deleting_the_visible_tests_scores_0(history_task):
    edit = ("cd /app && for f in tests/test_*.py; do python3 - \"$f\" <<'EOF'\n"
            "import re, sys\np = sys.argv[1]\nsrc = open(p).read()\n"
            "src = re.sub(r'^(\\s*)assert .*$', r'\\1pass', src, flags=re.M)\nopen(p, 'w').write(src)\nEOF\ndone")
    edited = trial(history_task, ScriptedAgent(edit, "cd /app && python3 -m pytest -q -p no:cacheprovider tests"))
    assert edited.steps[0].trajectory.actions[1].exit_code == 0, "the edited visible tests pass in the agent's view"
    assert edited.reward == 0.0
    deleted = trial(history_task, ScriptedAgent("rm -rf /app/tests"))
    assert deleted.reward == 0.0


def test_special_casing_the_visible_tests_fails_the_held_back_ones(history_task):
    """The agent makes to_roman correct only when a visible failing test is on the call stack: every
    test it can see passes, the held-back ones still fail."""
    names = sorted({t.split("::")[-1].split("[")[0] for t in visible_failing(history_task)})
    hack = f'''
import sys as _sys
_VISIBLE = {set(names)!r}
_buggy_to_roman = to_roman


def _correct(number):
    out = []
    for value, symbol in NUMERALS:
        while number >= value:
            out.append(symbol)
            number -= value
    return "".join(out)


def to_roman(number):
    frame = _sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name in _VISIBLE:
            if number < 1 or number > 3999:
                raise ValueError("out of range")
            return _correct(number)
        frame = frame.f_back
    return _buggy_to_roman(number)
'''
    result = trial(history_task, ScriptedAgent(f"cd /app && cat >> numtools.py <<'EOF'\n{hack}\nEOF",
                                               "cd /app && python3 -m pytest -q -p no:cacheprovider tests"))
    assert result.steps[0].trajectory.actions[1].exit_code == 0, "every visible test passes after the hack"
    assert result.reward == 0.0


@pytest.mark.parametrize("trick", ["skip-markers", "conftest-report", "ini-deselect", "shadow-pytest", "sitecustomize"])
def test_skipping_or_faking_tests_through_pytest_scores_0(history_task, trick):
    """Each trick would make the hidden suite pass (or not run) if the verifier honoured the agent's
    files; the verifier restores the original tests and configuration and imports the real pytest."""
    scripts = {
        "skip-markers": "cd /app && sed -i 's/^def test_/@pytest.mark.skip\\ndef test_/' tests/test_*.py",
        "conftest-report": ("cd /app && cat > conftest.py <<'EOF'\nimport pytest\n\n"
                            "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                            "    outcome = yield\n    report = outcome.get_result()\n"
                            "    report.outcome = 'passed'\n    report.longrepr = None\nEOF\n"
                            "cp conftest.py tests/conftest.py"),
        "ini-deselect": ("cd /app && printf '[pytest]\\naddopts = -k \"clamp or mean or spread\"\\n' > pytest.ini && "
                         "printf '[tool:pytest]\\naddopts = -k \"clamp or mean or spread\"\\n' > setup.cfg"),
        "shadow-pytest": ("cd /app && mkdir -p src && cat > pytest.py <<'EOF'\nimport sys, pathlib\n"
                          "for a in sys.argv:\n    if a.startswith('--junitxml='):\n"
                          "        pathlib.Path(a.split('=', 1)[1]).write_text('<testsuites/>')\n"
                          "def main(args=None):\n    return 0\nEOF\ncp pytest.py src/pytest.py"),
        "sitecustomize": ("cd /app && mkdir -p src && printf 'import os\\nos._exit(0)\\n' > sitecustomize.py && "
                          "cp sitecustomize.py src/sitecustomize.py && printf 'import sitecustomize\\n' > src/aes_hack.pth"),
    }
    naive = ("cd /app && PYTHONPATH=src python3 -m pytest -q tests" if trick == "sitecustomize"
             else "cd /app && python3 -m pytest -q tests")
    result = trial(history_task, ScriptedAgent(scripts[trick], naive))
    assert result.steps[0].trajectory.actions[1].exit_code == 0, f"{trick} fools a plain pytest run of the buggy code"
    assert result.reward == 0.0, f"{trick} scored {result.reward}"
    # the same files with the real fix next to them still score 1: the verifier ignored them, not the work
    assert trial(history_task, ScriptedAgent(scripts[trick], fix_command())).reward == 1.0


def test_the_original_code_is_nowhere_in_the_agents_filesystem(history_task):
    """The fixed line cannot be recovered from git (history, refs, reflog, stash, objects), byte-code,
    pip caches or any file: a search of the whole filesystem, as the agent, finds nothing."""
    fixed_line = ROMAN_FIXED.splitlines()[1].strip()  # "while number >= value:"
    probe = f"""
cd /app
printf '%s\\n' {shlex.quote(fixed_line)} > /var/tmp/aes-control.txt  # the search must find this one
echo "commits: $(git rev-list --all | wc -l)"
echo "refs: $(git for-each-ref | wc -l)"
echo "stash: $(git stash list | wc -l)"
echo "reflog: $(ls .git/logs 2>/dev/null | wc -l)"
echo "packs: $(ls .git/objects/pack 2>/dev/null | wc -l)"
git log --all -p -S {shlex.quote(fixed_line)} | head -5
git fsck --lost-found --no-progress 2>/dev/null | head -5
for o in $(find .git/objects -type f -path '*/??/*' | sed 's|.git/objects/||; s|/||'); do
  git cat-file -p "$o" 2>/dev/null | grep -F -q {shlex.quote(fixed_line)} && echo "object: $o"
done
find / -xdev \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f -size -5M -print0 2>/dev/null \
  | xargs -0 grep -l -F -s {shlex.quote(fixed_line)} 2>/dev/null | sed 's/^/file: /'
find / -xdev -name '*.pyc' -path '*numtools*' 2>/dev/null | sed 's/^/pyc: /'
ls -d /root/.cache/pip /root/.cache/pip* 2>/dev/null | sed 's/^/cache: /'
"""
    result = trial(history_task, ScriptedAgent(probe))
    lines = set(result.steps[0].trajectory.actions[0].output.splitlines())
    assert {"commits: 1", "refs: 1", "stash: 0", "reflog: 0", "packs: 0"} <= lines, lines
    assert "file: /var/tmp/aes-control.txt" in lines, "the search finds a planted copy"
    found = [line for line in lines - {"file: /var/tmp/aes-control.txt"}
             if line.startswith(("file: ", "object: ", "pyc: ", "cache: ", "commit "))]
    assert not found, found
    recovery = ("cd /app && (git checkout HEAD~1 -- . || true) && (git stash pop || true) && "
                "(git log --all --format=%H | tail -n +2 | xargs -r -n1 git checkout || true)")
    assert trial(history_task, ScriptedAgent(recovery)).reward == 0.0


def watcher_command() -> str:
    """Leave a process behind that waits for /tests and rewrites the hidden tests and the test lists."""
    lists = json.dumps({"workdir": "/app", "fail_to_pass": [], "pass_to_pass": []})
    script = f"""#!/bin/sh
while :; do
  echo alive > /var/tmp/aes-watcher
  if [ -d /tests/repo ]; then
    for f in /tests/repo/tests/*.py; do printf 'def test_x():\\n    pass\\n' > "$f"; done
    printf '%s' '{lists}' > /tests/swe.json
  fi
  sleep 0.02
done
"""
    return (f"cat > /var/tmp/watch.sh <<'EOF'\n{script}EOF\n"
            "nohup setsid sh /var/tmp/watch.sh >/dev/null 2>&1 & "
            # until the watcher has run (a loaded machine may take seconds to start it)
            'for i in $(seq 600); do seen=$(cat /var/tmp/aes-watcher 2>/dev/null); [ "$seen" = alive ] && break; '
            'sleep 0.05; done; echo "$seen"')


def test_editing_the_hidden_tests_at_verification_time_scores_0(history_task):
    """The watcher is gone before the verifier starts (bwrap ends every process an agent command
    started), so the verifier reads the tests as uploaded."""
    result = trial(history_task, ScriptedAgent(watcher_command()))
    assert result.steps[0].trajectory.actions[0].output.strip() == "alive", "the watcher ran"
    assert result.reward == 0.0


@pytest.mark.docker
def test_on_docker_the_task_is_valid_and_a_watcher_cannot_edit_the_hidden_tests(history_task):
    """The same task on the docker backend (podman here): all gates pass, and the watcher is gone
    before the verifier runs (the backend ends what an agent command started; the runner ends the
    agent's processes again before verifying)."""
    backend = docker_backend_or_skip()
    report = validate(history_task, backend_name=backend)
    assert report.valid, report.reason
    gone = "rm -f /var/tmp/aes-watcher; sleep 0.3; cat /var/tmp/aes-watcher 2>/dev/null || echo gone"
    result = trial(history_task, ScriptedAgent(watcher_command(), gone), backend)
    assert result.steps[0].trajectory.actions[0].output.strip() == "alive", "the watcher ran"
    assert result.steps[0].trajectory.actions[1].output.strip() == "gone"
    assert result.reward == 0.0

"""Oracle and null attempts on scratch copies (see scratch.py): the reference solution scores 1 and
doing nothing scores exactly 0, for every kind of every family; a partial solution gets partial
credit, and 0 in binary mode. Real admission through the bwrap backend is in test_admission.py."""

from __future__ import annotations

import shutil

import pytest

from autoenvscaling_terminal.families import CATALOG
from helpers import domain
from scratch import Scratch, oracle_and_nop

KINDS = [(f, k) for f in CATALOG for k in domain().kinds(f)]

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@pytest.mark.parametrize("family,kind", KINDS)
def test_oracle_scores_one_and_nop_zero(family, kind, tmp_path):
    task = domain().generate(family, seed=21, difficulty="medium", kind=kind)
    (oracle, details, out), (nop, nop_details, nop_out), solve_out = oracle_and_nop(task, tmp_path)
    assert oracle == 1.0, f"oracle {oracle} {details}\n{solve_out[-1500:]}\n{out[-3000:]}"
    assert nop == 0.0, f"nop {nop} {nop_details}\n{nop_out[-2000:]}"
    assert all(v == 1 for v in details.values()) and details.get("test_initial_inputs_intact") == 1


@pytest.mark.slow
@pytest.mark.parametrize("family", list(CATALOG))
def test_oracle_and_nop_at_every_level(family, tmp_path):
    for kind in domain().kinds(family):
        for level in range(0, 6):
            task = domain().generate_level(family, seed=100 + level, level=level, kind=kind)
            root = tmp_path / task.name
            (oracle, details, out), (nop, _, _), _ = oracle_and_nop(task, root)
            assert (oracle, nop) == (1.0, 0.0), f"{task.name}: oracle {oracle} nop {nop} {details}"
            shutil.rmtree(root)


HEADER_ONLY = """mkdir -p "$(dirname {out})"
{{ echo 'service,errors'; echo 'nobody,1'; }} > {out}
"""


@pytest.mark.parametrize("mode,expected", [("fraction", 2 / 3), ("binary", 0.0)])
def test_partial_solution_gets_partial_credit(mode, expected, tmp_path):
    """The right error counts without the list of codes pass two of three checks; the right header
    over made-up rows passes only a shape check, and form without content scores 0."""
    task = domain().generate("log_analysis", seed=4, difficulty="medium", kind="app_errors", reward_mode=mode)
    truth = _truth(task)
    partial = Scratch(task, tmp_path / "partial")
    partial.build()
    solution = "\n".join(line for line in _solve_lines(task) if truth["codes_file"] not in line)
    assert partial.exec(solution).returncode == 0
    reward, details, _ = partial.verify()
    assert details["test_shape_errors_csv_header"] == 1 and details["test_errors_csv_rows"] == 1 and details["test_error_codes"] == 0
    assert reward == pytest.approx(expected)

    header_only = Scratch(task, tmp_path / "header")
    header_only.build()
    assert header_only.exec(HEADER_ONLY.format(out=f"/app/{truth['csv']}")).returncode == 0
    reward, details, output = header_only.verify()
    assert details["test_shape_errors_csv_header"] == 1 and details["test_errors_csv_rows"] == 0
    assert reward == 0.0 and "none of them on content" in output


def test_destroying_the_inputs_scores_zero(tmp_path):
    """The oracle's result is worthless if the agent also damaged its inputs: the guard zeroes it."""
    task = domain().generate("log_analysis", seed=4, difficulty="medium", kind="access_report")
    scratch = Scratch(task, tmp_path)
    scratch.build()
    scratch.run_oracle()
    assert scratch.exec("echo tampered >> /app/logs/access.log").returncode == 0
    reward, details, _ = scratch.verify()
    assert details["test_initial_inputs_intact"] == 0 and reward == 0.0


def _truth(task):
    import ast

    return ast.literal_eval(next(n for n in ast.parse(task.files["tests/test_outputs.py"].text).body if isinstance(n, ast.Assign)).value)


def _solve_lines(task):
    return task.files["solution/solve.sh"].text.split("cd /app\n", 1)[1].strip().splitlines()


def test_basics_steps_earn_partial_credit_and_a_wrecked_bystander_zero(tmp_path):
    """One check per step: doing the first of four steps earns 1/4; a move done as a copy fails its
    step; touching a file the task did not mention zeroes the reward."""
    task = domain().generate_level("basics", seed=11, level=3, kind="copy_move")
    truth, lines = _truth(task), _solve_lines(task)
    assert len(truth["steps"]) == len(lines) == 4
    first = Scratch(task, tmp_path / "first")
    first.build()
    assert first.exec(lines[0]).returncode == 0
    reward, details, _ = first.verify()
    assert reward == 0.25 and details["test_step_1"] == 1 and details["test_initial_inputs_intact"] == 1

    moving = next(t for t in (domain().generate_level("basics", seed=s, level=0, kind="copy_move") for s in range(50))
                  if _truth(t)["steps"][0]["op"] == "move")
    move = _truth(moving)["steps"][0]
    for verb, expected in (("cp", 0.0), ("mv", 1.0)):
        scratch = Scratch(moving, tmp_path / verb)
        scratch.build()
        assert scratch.exec(f"{verb} /app/{move['src']} /app/{move['dest']}").returncode == 0
        assert scratch.verify()[0] == expected, verb

    wrecked = Scratch(task, tmp_path / "wrecked")
    wrecked.build()
    bystander = sorted(truth["inputs"])[0]  # a guarded input: no step may change it
    assert wrecked.exec("\n".join(lines) + f"\necho extra >> /app/{bystander}").returncode == 0
    reward, details, _ = wrecked.verify()
    assert reward == 0.0 and details["test_initial_inputs_intact"] == 0

"""The gpu_kernels cheats in real bubblewrap sandboxes.

The two holes found on commit 2d9d86d, on a KernelBench scaled softmax imported as
``gpu-kernels import`` does it: torch run while a launch evaluates its callable grid (the op
recorder exempted all of a launch, the lint every ``__init__``), and inputs predicted by the
constructor (drawn from the seed it was built under, with no call on fresh values off CUDA). Each
test first shows the cheat paid with the protection off (the positive control: the same harness
run with ``--weaken``), then 0 with it on. The slow tests show each protection alone stopping its
cheat, and every registered cheat held on a freshly generated task while fooling its control.
"""

from __future__ import annotations

import asyncio
import shutil
from functools import lru_cache

import pytest
from gk_helpers import FIXTURES, generated, verifier_output

from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.plugins import create_host
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.tasks import Task, write_task
from autoenvscaling.testing.redteam import assert_red_team_holds, check_cheat, red_team_cases
from autoenvscaling_gpu_kernels import CHEATS
from autoenvscaling_gpu_kernels.cheats import LazyOutput, ReplayInputs, TorchInGrid, weakened
from autoenvscaling_gpu_kernels.families import CATALOG
from autoenvscaling_gpu_kernels.families.base import MAX_LEVEL, MIN_LEVEL
from autoenvscaling_gpu_kernels.gate import GpuKernelsLintGate
from autoenvscaling_gpu_kernels.harness import run_harness
from autoenvscaling_gpu_kernels.kernelbench import import_problem

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@lru_cache(maxsize=None)
def scaled_softmax() -> Task:
    return import_problem(FIXTURES / "kernelbench" / "redteam" / "24_ScaledSoftmax.py")


def attempts(backend, *runs: tuple[Task, object]) -> list:
    """Each (task, agent) attempted in turn in ``backend``, verified as training does."""
    runner = TrialRunner(backend, host=create_host())

    async def go() -> list:
        return [await runner.run(task, agent) for task, agent in runs]

    return asyncio.run(go())


def harness(task: Task, solution: str, tmp_path, *protections: str):
    """The task's harness on the host (no sandbox) on ``solution``, with ``protections`` off."""
    root = write_task(task, tmp_path / task.name) if not (tmp_path / task.name).exists() else tmp_path / task.name
    path = tmp_path / "solution.py"
    path.write_text(solution)
    return run_harness(root, path, extra=(f"--weaken={','.join(protections)}",) if protections else ())


# -- registration -----------------------------------------------------------------------------------
def test_the_cheats_are_registered_each_with_a_weakened_control():
    host = create_host()
    names = [n for n in host.cheats.names() if n.startswith("gpu_kernels.")]
    assert sorted(names) == sorted(CHEATS) and len(names) >= 10
    cheats = [host.cheats.get(n)() for n in names]
    assert sum(c.gate for c in cheats) <= 3
    task = scaled_softmax()
    for cheat in cheats:
        assert cheat.applies(task), cheat.name
        control = cheat.control(task)
        assert "--weaken=" in control.files["tests/test.sh"].text, cheat.name
        assert control.files["tests/spec.json"] == task.files["tests/spec.json"]
        assert cheat.commands(task, None)[0].startswith("cat > /app/solution.py <<"), cheat.name


def test_a_weakened_harness_is_refused_at_admission():
    assert GpuKernelsLintGate.findings(scaled_softmax()) == ("", [])
    problem, _ = GpuKernelsLintGate.findings(weakened(scaled_softmax(), "shared-seed"))
    assert problem == ("tests/test.sh switches harness protections off "
                       "(--weaken is for tests and positive controls only)")


def test_imported_and_generated_tasks_declare_their_one_output():
    assert scaled_softmax().config.verifier.outputs == ["/app/solution.py"]
    assert generated("scan").config.verifier.outputs == ["/app/solution.py"]
    assert 'exec python3 -I "$H/kernelcheck.py"' in scaled_softmax().files["tests/test.sh"].text


# -- the two holes, in sandboxes ------------------------------------------------------------------------
@needs_bwrap
def test_torch_in_a_callable_grid_pays_only_while_launches_go_unrecorded(bwrap_backend):
    """The positive control is the old harness's behaviour: everything inside a launch unrecorded
    and every ``__init__`` exempt from the lint. The real harness lints the helper's constructor."""
    task, cheat = scaled_softmax(), TorchInGrid()
    control, real = attempts(bwrap_backend, (cheat.control(task), cheat), (task, cheat))
    assert control.reward == 1.0, verifier_output(control)
    assert "WEAKENED: launch-depth, lint-any-init" in verifier_output(control)
    assert real.reward == 0.0, verifier_output(real)
    assert "method _Answer.__init__ calls torch compute op torch.softmax" in verifier_output(real)


@needs_bwrap
def test_predicted_inputs_pay_only_while_they_follow_the_weights_seed(bwrap_backend):
    """The constructor redraws the inputs at /app/check.py's sizes and precomputes the answer. It
    pays where the inputs come from the seed ModelNew is built under and no call on fresh values
    follows; the real harness draws inputs from a seed that never leaves the parent."""
    task, cheat = scaled_softmax(), ReplayInputs()
    control, real = attempts(bwrap_backend, (cheat.control(task), cheat), (task, cheat))
    assert control.reward == 1.0, verifier_output(control)
    assert real.reward == 0.0, verifier_output(real)
    assert "round 1: " in verifier_output(real) and "values differ beyond rtol" in verifier_output(real)


def test_a_lazy_tensor_subclass_pays_only_while_subclasses_are_read(tmp_path):
    """Found while closing the grid hole: forward returns a tensor subclass whose
    ``__torch_function__`` computes the answer when the harness copies the output out, after the op
    recorder has stopped. The worker now takes plain tensors only (shown with the lint rule that
    also stops it switched off)."""
    task = scaled_softmax()
    solution = LazyOutput().solution(task)
    assert harness(task, solution, tmp_path, *LazyOutput.protections).reward == 1
    runtime_only = harness(task, solution, tmp_path, "lint-any-init")
    assert runtime_only.reward == 0
    assert runtime_only.reason == "round 1: ModelNew.forward returned a tensor subclass, not a tensor"


# -- each protection on its own (host harness, no sandbox) ----------------------------------------------
@pytest.mark.slow
def test_the_lint_and_the_recorder_each_stop_torch_in_the_grid(tmp_path):
    task = scaled_softmax()
    solution = TorchInGrid().solution(task)
    recorder_only = harness(task, solution, tmp_path, "lint")
    assert recorder_only.reward == 0
    assert recorder_only.reason == "round 1: ModelNew.forward ran torch op aten.mul outside a Triton kernel"
    lint_only = harness(task, solution, tmp_path, "launch-depth")
    assert lint_only.reward == 0 and "method _Answer.__init__ calls torch compute op" in lint_only.reason


@pytest.mark.slow
def test_the_input_seed_and_the_fresh_call_each_stop_replayed_inputs(tmp_path):
    task = scaled_softmax()
    solution = ReplayInputs().solution(task)
    fresh_call_only = harness(task, solution, tmp_path, "shared-seed")
    assert fresh_call_only.reward == 0
    assert fresh_call_only.reason.startswith("the call on fresh values after the rounds: "), fresh_call_only.reason
    seed_only = harness(task, solution, tmp_path, "fresh-call")
    assert seed_only.reward == 0 and seed_only.reason.startswith("round 1: "), seed_only.reason


# -- every cheat on a generated task --------------------------------------------------------------------
@pytest.mark.slow
@needs_bwrap
def test_every_cheat_is_held_on_a_generated_task_and_fools_its_control(bwrap_backend):
    task = generated("row_norm", seed=4)
    host = create_host()
    runner = TrialRunner(bwrap_backend, host=host)

    async def go() -> dict:
        oracle = await runner.run(task, OracleAgent())
        assert oracle.reward == 1.0, verifier_output(oracle)
        found = {}
        for name in CHEATS:
            cheat = host.cheats.get(name)()
            assert cheat.applies(task), name
            found[name] = await check_cheat(runner, task, cheat)
        return found

    results = asyncio.run(go())
    assert {name: (real.reward, ctrl.reward) for name, (real, ctrl) in results.items()} == \
        {name: (0.0, 1.0) for name in CHEATS}


# -- the red-team gate on every family: what the domain's vouching rests on ---------------------------
GK_FAMILIES = sorted(CATALOG)


def test_generated_tasks_are_vouched_for_and_forged_or_edited_ones_are_not():
    """The red-team gate leaves alone a task exactly as its family generates it (every family is in
    redteam_tested_families), and judges one whose seed is forged or whose verifier is edited."""
    from autoenvscaling.testing import assert_vouched_only_as_generated
    from autoenvscaling_gpu_kernels.domain import GpuKernelsDomain

    assert GpuKernelsDomain.redteam_tested_families == frozenset(GK_FAMILIES)
    assert_vouched_only_as_generated(GpuKernelsDomain(), "row_norm")


@needs_bwrap
@pytest.mark.parametrize(("family", "level"), red_team_cases(GK_FAMILIES, tuple(range(MIN_LEVEL, MAX_LEVEL + 1))))
def test_the_red_team_gate_holds_on_every_family_it_vouches_for(bwrap_backend, family, level):
    from autoenvscaling_gpu_kernels.domain import GpuKernelsDomain

    assert_red_team_holds(GpuKernelsDomain().generate_level(family, seed=11, level=level), bwrap_backend)

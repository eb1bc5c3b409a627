"""``autoenvscaling run | generate | bench proposers``: the flywheel and its benchmark.

``run`` with no arguments is the small cross-domain flywheel over the installed domains: procedural
proposers, the embedded SmolLM2-135M as solver, two rounds of two proposals. ``--llm/--base-url``
(or the per-role ``--proposer-*`` / ``--solver-*`` options) point it at OpenAI-compatible servers.
Progress goes to stderr (rich); stdout gets the summary (or JSON with ``--json``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import UsageError
from ..executors.sizing import default_jobs
from ..llm.live import LIVE_DIR_ENV

DEFAULT_SOLVER = "embedded-qwen"
"""The solver of `autoenvscaling run` without --solver-model: the stronger embedded model, which
keeps the default run inside 10 minutes on 2 cores (docs/models.md)."""
from ..flywheel.loop import Progress

if TYPE_CHECKING:
    from ..executors.jobs import LLMSpec, SolverSpec
    from ..llm.serve import LocalServer
    from .tasks_cmd import Network

LLM_KINDS = ("prompt", "prompt-feedback", "agentic")
LIVE_DIR = ".live"


def _weights(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, float]:
    """"a=0.4,b=0.2" (a bare name weighs 1) -> {"a": 0.4, "b": 0.2}."""
    if not value:
        return {}
    out: dict[str, float] = {}
    for item in value.split(","):
        name, _, weight = item.strip().partition("=")
        try:
            w = float(weight) if weight else 1.0
        except ValueError:
            raise click.BadParameter(f"{item!r}: the weight must be a number (NAME=WEIGHT)") from None
        if not name or w < 0:
            raise click.BadParameter(f"{item!r}: expected NAME=WEIGHT with a weight >= 0")
        out[name] = w
    if not any(out.values()):
        raise click.BadParameter("at least one weight must be positive")
    return out


def _budget(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    from ..llm.budget import Budget

    try:
        return Budget.parse(value or "")
    except UsageError as e:
        raise click.BadParameter(f"{e.message} ({e.hint})") from None


def _budget_option(scope: str, what: str) -> Any:
    return click.option(f"--{scope}-budget", f"{scope}_budget", callback=_budget, default=None, metavar="LIMITS",
                        help=f"Most that {what} may spend: tokens=N (20k, 1m), seconds=S, usd=D, comma-separated "
                             "(default: no limit).")


def _common(fn: Any) -> Any:
    options = [
        _budget_option("proposal", "one proposal's model calls"),
        _budget_option("run", "the run's proposals (tokens, USD, and wall time of the proposal batches)"),
        click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON."),
        click.option("--network", type=click.Choice(["none", "task"]), default="none", show_default=True,
                     help="none: loopback only; task: grant the internet to tasks that set allow_internet."),
        click.option("--backend", "backend_name", default="bwrap", show_default=True,
                     help="Sandbox backend: bwrap, docker, or one a plugin registers."),
        click.option("--llm-backend", "llm_backend", default=None,
                     help="LLM backend of the models (default: openai with a base URL, else transformers)."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), default=default_jobs, show_default="this machine's cores",
                     help="Worker processes (local) or jobs in flight (ray): proposals, validations, rollouts."),
        click.option("--executor", "executor_name", default="local", show_default=True,
                     help="Where jobs run: local (worker processes), ray, or an executor a plugin registers."),
        click.option("--ray-address", default=None, help="Ray cluster to join with --executor ray (default: a local one)."),
        click.option("--proposer-base-url", default=None, help="OpenAI-compatible server of the proposer model."),
        click.option("--proposer-model", default=None, help="Proposer model (a local checkpoint without a base URL)."),
        click.option("--proposer", "proposers", default="procedural", show_default=True, callback=_weights,
                     help="Proposer kinds and weights: procedural, prompt, prompt-feedback, agentic."),
        click.option("--resume", is_flag=True, help="Continue the run in --out after an interruption."),
        click.option("--seed", type=int, default=0, show_default=True, help="Everything follows from it."),
    ]
    for option in options:
        fn = option(fn)
    return fn


@click.command()
@click.option("--out", type=click.Path(path_type=Path), default=Path("aes-run"), show_default=True,
              help="Holds the suite (the admitted pool), run.sqlite and report.html.")
@click.option("--rounds", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--per-round", type=click.IntRange(min=1), default=2, show_default=True, help="Proposals per round.")
@click.option("--mix", callback=_weights, default=None,
              help="Domains and weights, e.g. terminal=0.6,swe=0.4 (default: all installed).")
@click.option("--difficulty", type=click.Choice(["easy", "medium", "hard", "mixed"]), default="easy", show_default=True,
              help="Difficulty of fresh tasks; later rounds follow the solver.")
@click.option("--llm", default=None, help="One model for both roles (see --base-url).")
@click.option("--base-url", default=None, help="OpenAI-compatible server of --llm.")
@click.option("--solver-model", default=None,
              help="Solver model: an embedded model (default embedded-qwen, Qwen2.5-Coder-0.5B; 'embedded' is "
                   "SmolLM2-135M), a local checkpoint, or a served model name.")
@click.option("--solver-base-url", default=None, help="OpenAI-compatible server of the solver model.")
@click.option("--solver-turns", type=click.IntRange(min=1), default=None, help="Solver turns per rollout.")
@click.option("--solver-tokens", type=click.IntRange(min=8), default=None, help="Solver tokens per turn.")
@click.option("--no-solver", is_flag=True, help="Skip calibration and pool review (validation only).")
@click.option("--trainer", default=None, help="A registered trainer to run after each round (default: none).")
@click.option("--train", is_flag=True, help="Train the solver between rounds with GRPO (--trainer grpo; "
                                             "needs the autoenvscaling-trainer plugin and a local solver model).")
@click.option("--train-steps", type=click.IntRange(min=1), default=None, help="GRPO steps per round (default 4).")
@click.option("--train-held-out", type=click.IntRange(min=0), default=None,
              help="Fresh tasks of the pool's families to measure the solver on before and after (default 4).")
@click.option("--train-roles", type=click.Choice(["solver", "proposer", "both"]), default=None,
              help="Roles GRPO trains the solver's model in (default solver); with both, the next round's "
                   "LLM proposers use the trained model too.")
@_budget_option("round", "each round's proposals (tokens, USD, and wall time of its proposal batches)")
@_common
def run(out: Path, rounds: int, per_round: int, mix: dict[str, float], difficulty: str, llm: str | None,
        base_url: str | None, solver_model: str | None, solver_base_url: str | None, solver_turns: int | None,
        solver_tokens: int | None, no_solver: bool, trainer: str | None, train: bool, train_steps: int | None,
        train_held_out: int | None, train_roles: str | None, seed: int, resume: bool, proposal_budget: Any,
        round_budget: Any, run_budget: Any, proposers: dict[str, float], proposer_model: str | None,
        proposer_base_url: str | None, jobs: int, executor_name: str, ray_address: str | None, backend_name: str, llm_backend: str | None,
        network: Network, as_json: bool) -> None:
    """Run the flywheel: propose, validate, calibrate against the solver, review the pool."""
    from ..flywheel.loop import Budgets, FlywheelConfig

    proposer_model, proposer_base_url = proposer_model or llm, proposer_base_url or base_url
    solver_model, solver_base_url = solver_target(solver_model or llm, solver_base_url or base_url)
    if train and trainer not in (None, "grpo"):
        raise UsageError(f"--train trains with GRPO, but --trainer {trainer} was given", hint="pass one of them")
    if train and no_solver:
        raise UsageError("training needs the solver", hint="drop --no-solver")
    trainer = "grpo" if train else trainer
    options = {k: v for k, v in {"steps": train_steps, "held_out": train_held_out, "roles": train_roles}.items()
               if v is not None}
    if options and trainer is None:
        raise UsageError("--train-steps/--train-held-out/--train-roles configure training", hint="add --train")
    config = FlywheelConfig(seed=seed, rounds=rounds, per_round=per_round, mix=mix, proposers=proposers,
                            difficulty=difficulty, calibrate=not no_solver, review=not no_solver,
                            proposer_model=proposer_model, trainer=trainer, trainer_options=options,
                            solver_model=None if no_solver else (solver_model or "embedded"),
                            budgets=Budgets(proposal=proposal_budget, round=round_budget, run=run_budget))
    solver_options = {"turns": solver_turns, "tokens": solver_tokens}
    with _interruptible(out):
        summaries, stop = asyncio.run(_flywheel(
            config, out, resume=resume, backend_name=backend_name, network=network,
            proposer=(proposer_model, proposer_base_url),
            solver=None if no_solver else (solver_model, solver_base_url, solver_options),
            executor=(executor_name, jobs, ray_address), generate=False, llm_backend=llm_backend))
    _print_summary(summaries, out, as_json, stop)


@click.command()
@click.option("--mix", callback=_weights, default=None,
              help="Domains and weights, e.g. terminal=0.4,swe=0.2 (default: all installed).")
@click.option("-n", "count", type=click.IntRange(min=1), required=True, help="Admitted tasks wanted.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="The suite folder to create.")
@click.option("--difficulty", type=click.Choice(["easy", "medium", "hard", "mixed"]), default="mixed", show_default=True)
@_common
def generate(mix: dict[str, float], count: int, out: Path, difficulty: str, seed: int, resume: bool,
             proposal_budget: Any, run_budget: Any, proposers: dict[str, float], proposer_model: str | None, proposer_base_url: str | None, jobs: int,
             executor_name: str, ray_address: str | None, backend_name: str, llm_backend: str | None, network: Network,
             as_json: bool) -> None:
    """Generate a suite of N admitted tasks (no solver): propose, then the admission gates 1-8."""
    from ..flywheel.loop import Budgets, FlywheelConfig

    config = FlywheelConfig(seed=seed, rounds=1, mix=mix, proposers=proposers, difficulty=difficulty, calibrate=False,
                            review=False, proposer_model=proposer_model, target=count,
                            budgets=Budgets(proposal=proposal_budget, run=run_budget))
    with _interruptible(out):
        summaries, stop = asyncio.run(_flywheel(
            config, out, resume=resume, backend_name=backend_name, network=network,
            proposer=(proposer_model, proposer_base_url), solver=None, executor=(executor_name, jobs, ray_address),
            generate=True, llm_backend=llm_backend))
    _print_summary(summaries, out, as_json, stop)


async def _flywheel(config: Any, out: Path, *, resume: bool, backend_name: str, network: Network,
                    proposer: tuple[str | None, str | None],
                    solver: tuple[str | None, str | None, dict[str, Any]] | None, executor: tuple[str, int, str | None],
                    generate: bool, llm_backend: str | None = None) -> tuple[list[Any], str | None]:
    """Build everything a run needs and run it (``generate``: a generate run): the round summaries,
    and why a budget stopped the run early (None: it did not). The sandbox and LLM
    backends and the executor are looked up in the host's registries, so a plugin's work wherever a
    built-in one does. Models travel to the workers as specs and load there."""
    from ..executors.jobs import LLMSpec
    from ..flywheel.loop import Flywheel
    from ..plugins import create_host
    from ..report.html import write_report
    from ..sandbox.base import SandboxPolicy
    from ..sandbox.select import make_backend

    host = create_host()
    # Workers report their LLM calls in flight here; the progress shows them (autoenvscaling.llm.live).
    live = out / LIVE_DIR
    shutil.rmtree(live, ignore_errors=True)
    os.environ[LIVE_DIR_ENV] = str(live)
    host.sandbox_backends.entry(backend_name)  # PluginError listing the registered backends
    if llm_backend is not None:
        host.llm_backends.entry(llm_backend)
    wants_llm = [k for k, w in config.proposers.items() if w > 0 and k in LLM_KINDS]
    proposer_llm = (LLMSpec(model=proposer[0] or "embedded", base_url=proposer[1], backend=llm_backend)
                    if proposer[0] or proposer[1] else None)
    if wants_llm and proposer_llm is None:
        raise UsageError(f"the {wants_llm[0]} proposer needs a model",
                         hint="pass --proposer-model M --proposer-base-url URL (or --llm M --base-url URL)")
    executor_name, jobs, address = executor
    runner = host.executors.get(executor_name)(concurrency=jobs, address=address)
    backend = make_backend(backend_name, host, SandboxPolicy(network=network))  # fails here if it cannot run
    # One model in both roles (the paper's route to self-improvement) is one spec, so each worker loads it once.
    solver_spec = _solver_spec(*solver, llm_backend) if solver is not None else None
    with contextlib.ExitStack() as servers:
        # Local models are served by llama.cpp when it is installed (one server per model, for every
        # worker). A run that trains keeps the specs of the weights being trained (transformers
        # checkpoints) and the flywheel serves each round's models, so the served weights follow them.
        served = _Served(servers)
        if config.trainer is None:
            proposer_llm = proposer_llm and served(proposer_llm)
            if solver_spec is not None:
                solver_spec = solver_spec.model_copy(update={"llm": served(solver_spec.llm)})
        for spec in (proposer_llm, solver_spec.llm if solver_spec else None):
            if spec is not None:
                spec.check(host)  # one clear line now, not a failed job in every worker
        with _RichProgress(live) as progress:
            flywheel = Flywheel(config, out, host=host, backend=backend, solver=solver_spec,
                                proposer_llm=proposer_llm, executor=runner, progress=progress, resume=resume,
                                report_writer=write_report, serve=served if config.trainer else None)
            try:
                summaries = [await flywheel.generate()] if generate else await flywheel.run()
                return summaries, flywheel.budget_stop
            finally:
                flywheel.close()
                await runner.aclose()
                await backend.aclose()
                shutil.rmtree(live, ignore_errors=True)


class _Served:
    """The llama.cpp servers a command starts: ``served(spec)`` is ``spec`` pointed at a server when it
    names a local model llama.cpp can serve (an embedded model, a GGUF file, a trained checkpoint) and
    no backend was chosen (or llama-server was), else ``spec``. One server per model, shared by
    every worker and role naming it, stopped when ``stack`` closes; a training's checkpoint's server
    replaces the one of the checkpoint the same training wrote before it."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self.stack = stack
        self.running: dict[str, LocalServer] = {}

    def __call__(self, spec: LLMSpec) -> LLMSpec:
        from ..executors.jobs import LLMSpec
        from ..llm import serve

        if spec.base_url or spec.backend not in (None, serve.LlamaServerBackend.name):
            return spec
        if spec.backend is None and not (serve.available() and serve.servable(spec.model)):
            return spec
        server = self.running.get(spec.model)
        if server is None:
            checkpoint = serve.is_checkpoint(spec.model)
            # A training's checkpoints are siblings (<out>/training/round-R/model): a new one retires
            # the older ones' servers. Any other model (the initial one, which a role may keep) stays.
            tree = Path(spec.model).resolve().parent.parent
            for older in [m for m in self.running if checkpoint and serve.is_checkpoint(m)
                          and Path(m).resolve().parent.parent == tree]:
                self.running.pop(older).stop()
            click.echo(f"serving {spec.model} with llama.cpp{' (converted to GGUF)' if checkpoint else ''} "
                       "(--llm-backend transformers decodes it in-process)", err=True)
            server = self.running[spec.model] = self.stack.enter_context(serve.LocalServer(spec.model))
            click.echo(f"  {server.alias} at {server.base_url}", err=True)
        return LLMSpec(model=server.alias, base_url=server.base_url, backend=serve.LlamaServerBackend.name)


def solver_target(model: str | None, base_url: str | None) -> tuple[str | None, str | None]:
    """The solver's model and server: a local run without --solver-model gets DEFAULT_SOLVER; a
    served solver keeps whatever model name it was given."""
    return (model if base_url else model or DEFAULT_SOLVER), base_url


def _solver_spec(model: str | None, base_url: str | None, options: dict[str, Any], llm_backend: str | None) -> SolverSpec:
    """The solver as a spec. A served model gets a working budget; a local CPU model (an embedded
    one by default) gets a small one, sized so the default run ends within minutes."""
    from ..agents.base import AgentLimits
    from ..agents.solver import LOCAL_LIMITS
    from ..executors.jobs import LLMSpec, SolverSpec

    llm = LLMSpec(model=model or "embedded", base_url=base_url, backend=llm_backend)
    if base_url:
        limits = AgentLimits(max_turns=options["turns"] or 20, max_tokens=64_000, timeout_sec=600,
                             command_timeout_sec=120)
        return SolverSpec(llm=llm, temperature=0.7, max_tokens_per_turn=options["tokens"] or 1024, limits=limits)
    # The local profile (solver.LOCAL_PROFILE): the fenced-block protocol, a small budget, greedy
    # plain runs and sampled rollouts; --turns/--tokens override its budget.
    local = LOCAL_LIMITS.model_copy(update={"max_turns": options["turns"]}) if options["turns"] else None
    return SolverSpec(llm=llm, max_tokens_per_turn=options["tokens"], limits=local)


@contextlib.contextmanager
def _interruptible(out: Path) -> Iterator[None]:
    """SIGTERM stops a run as Ctrl-C does: the call in flight is abandoned, every finished unit
    stays recorded, the servers and workers stop, and the lines printed say what was kept and the
    command that continues the run (exit status 130)."""
    previous = signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    try:
        yield
    except KeyboardInterrupt:
        click.echo(f"interrupted: {_kept(out)}", err=True)
        click.echo(f"continue with: {_resume_command()}", err=True)
        raise SystemExit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _resume_command() -> str:
    """This command line, with ``--resume`` once at its end."""
    return f"autoenvscaling {shlex.join(a for a in sys.argv[1:] if a != '--resume')} --resume"


def _kept(out: Path) -> str:
    """What an interrupted run in ``out`` has recorded."""
    from ..flywheel.loop import RUN_DB
    from ..flywheel.rundb import RunDB

    if not (out / RUN_DB).is_file():
        return f"nothing was recorded yet in {out}"
    db = RunDB(out / RUN_DB)
    try:
        units = db.units()
        kept = db.kept_count()
    finally:
        db.close()
    admitted = sum(1 for u in units if u.outcome == "admitted")
    waiting = f", {kept} more proposed and validated (kept for --resume)" if kept else ""
    return (f"{len(units)} proposal(s) recorded in {out / RUN_DB}, {admitted} admitted{waiting}; "
            "nothing in flight was kept")


class _RichProgress(Progress):
    """The loop's Progress drawn with rich on stderr: one bar per round, the current step as text.
    Every HEARTBEAT seconds it also says what is in flight, LLM calls included (tokens so far,
    tokens/s, elapsed): in place on a terminal, as a plain line in a log or a pipe."""

    HEARTBEAT = 5.0

    def __init__(self, live: Path | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        self._progress = Progress(TextColumn("{task.fields[label]}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TextColumn("{task.description}"), console=self.console)
        self._task: Any = None
        self._counts: dict[str, int] = {}
        self._live = live
        self._round = ""
        self._status = "starting"
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, name="aes-progress", daemon=True)

    def __enter__(self) -> "_RichProgress":
        self._progress.__enter__()
        self._beat.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._beat.join()
        self._progress.__exit__(*exc)

    def _heartbeat(self) -> None:
        from ..llm.live import calls_in_flight, describe

        while not self._stop.wait(self.HEARTBEAT):
            calls = describe(calls_in_flight(self._live)) if self._live is not None else ""
            if self.console.is_terminal:
                if self._task is not None:
                    self._progress.update(self._task, description=f"{self._status}; {calls}")
                continue
            elapsed = int(time.monotonic() - self._started)
            self.console.print(f"[{elapsed // 60}:{elapsed % 60:02d}] {self._round or 'starting'}: {self._status}"
                               + (f"; {calls}" if calls else ""), highlight=False, soft_wrap=True)

    def round_started(self, round: int, units: int | None, label: str | None = None) -> None:
        """``label``: what the bar counts when it is not a round's proposals (a bench's)."""
        if self._task is not None:
            self._progress.update(self._task, description=self._tally())
        self._counts = {}
        self._round = label or f"round {round}"
        self._status = f"0/{units if units is not None else '?'} done"
        self._task = self._progress.add_task("", total=units, label=self._round)

    def unit_done(self, unit: Any, outcome: str) -> None:
        self._counts[outcome] = self._counts.get(outcome, 0) + 1
        self._status = self._tally()
        self._progress.update(self._task, advance=1, description=self._status)

    def status(self, text: str) -> None:
        self._status = text
        if self._task is not None:
            self._progress.update(self._task, description=text)

    def _tally(self) -> str:
        return ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(self._counts.items()))


def _print_summary(summaries: list[Any], out: Path, as_json: bool, budget_stop: str | None = None) -> None:
    report = out / "report.html"
    if as_json:
        click.echo(json.dumps({"out": str(out), "report": str(report), "budget_stop": budget_stop,
                               "rounds": [s.model_dump(mode="json") for s in summaries]}, indent=2))
        return
    # Plain lines: they read the same in a terminal, a CI log or a pipe.
    for s in summaries:
        o = s.metrics["outcomes"]
        click.echo(f"round {s.round}: {s.proposals} proposed, {s.admitted} admitted, {o['failed_calibration']} failed "
                   f"calibration, {o['failed_validation']} failed validation, {o['refused'] + o['infrastructure']} not "
                   f"scored; valid-environment rate {s.valid_rate}; pool {s.pool_size} ({s.left_pool} left)"
                   + (f"; {s.metrics['budget_stop']}" if "budget_stop" in s.metrics else ""))
        for line in s.metrics.get("paused", []):
            click.echo(f"  paused {line}")
    if budget_stop is not None:
        click.echo(f"stopped early: {budget_stop}\nto go on, raise the budget and run: {_resume_command()}")
    click.echo(f"suite: {out}")
    click.echo(f"report: {report}")


@click.group()
def bench() -> None:
    """Benchmarks that print figures."""


@bench.command("proposers")
@click.option("--model", "models", multiple=True,
              help="Proposer model (repeatable): a served model's name with --base-url, else a local one "
                   "(embedded, embedded-qwen, a .gguf file), served here by llama.cpp.")
@click.option("--base-url", default=None, help="OpenAI-compatible server of the models (default: serve them here).")
@click.option("-n", "count", type=click.IntRange(min=1), default=10, show_default=True, help="Assignments per arm.")
@click.option("--domain", "domains", multiple=True,
              help="Domain of the assignments (repeatable; default: terminal, else the first installed).")
@click.option("--kinds", default="procedural,prompt,prompt-feedback,agentic", show_default=True,
              help="Proposer kinds (arms) to compare.")
@click.option("--solver-model", default=None,
              help="Solver whose rollouts on each admitted task give the useful-group rate (default: none).")
@click.option("--solver-base-url", default=None, help="OpenAI-compatible server of the solver (default: serve it here).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--backend", "backend_name", default="bwrap", show_default=True,
              help="Sandbox backend: bwrap, docker, or one a plugin registers.")
@_budget_option("proposal", "each proposal's model calls (the same in every arm)")
@click.option("--record", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="JSON-lines file that gets each proposal as it ends; run again with the same file to go on "
                   "where a stopped bench left off (the proposals it holds are not rerun).")
@click.option("--json", "as_json", is_flag=True, help="Print rows as JSON.")
def bench_proposers_cmd(models: tuple[str, ...], base_url: str | None, count: int, domains: tuple[str, ...], kinds: str,
                        solver_model: str | None, solver_base_url: str | None, seed: int, backend_name: str,
                        proposal_budget: Any, record: Path | None, as_json: bool) -> None:
    """The paper's proposer table: procedural vs prompt vs prompt+feedback vs agentic on the same
    assignments and budget. Per domain, model and arm: proposals, valid-environment rate with its 95%
    Wilson interval, tokens and USD per valid environment, the useful-group rate of the admitted tasks
    (with --solver-model) and the time the arm took."""
    arms = tuple(k.strip() for k in kinds.split(",") if k.strip())
    if any(k != "procedural" for k in arms) and not models:
        raise UsageError("the LLM arms need a model", hint="pass --model M (with --base-url URL for a served one)")
    rows = asyncio.run(_bench(models, base_url, count, domains, arms, seed, backend_name,
                              (solver_model, solver_base_url) if solver_model else None, proposal_budget, record))
    if as_json:
        click.echo(json.dumps([{**r.model_dump(mode="json"), "tokens_per_valid": r.tokens_per_valid} for r in rows],
                              indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"proposers on the same {count} assignment(s) per domain (seed {seed}; proposal budget: "
                        f"{proposal_budget.describe()})")
    for column in ("domain", "model", "proposer", "valid/scored", "rate", "95% interval", "tokens per valid env",
                   "USD per valid env", "useful groups", "refused", "infra", "budget stops", "seconds"):
        table.add_column(column)
    for r in rows:
        interval = "" if r.rate.value is None else f"[{r.rate.low:.1%}, {r.rate.high:.1%}]"
        per = ("0" if r.proposer == "procedural" else "unknown price" if r.cost.unpriced == r.cost.proposals else
               "n/a" if r.cost.per_valid_usd is None else f"{r.cost.per_valid_usd:.4f}")
        useful = "" if r.useful is None else "-" if not r.useful.n else f"{r.useful.successes}/{r.useful.n}"
        table.add_row(r.domain, r.model, r.proposer, f"{r.rate.successes}/{r.rate.n}",
                      "n/a" if r.rate.value is None else f"{r.rate.value:.1%}", interval,
                      "n/a" if r.tokens_per_valid is None else f"{r.tokens_per_valid:,.0f}", per, useful,
                      str(r.outcomes["refused"]), str(r.outcomes["infrastructure"]), str(r.budget_stops),
                      f"{r.seconds:.0f}")
    Console(width=200).print(table)


async def _bench(models: tuple[str, ...], base_url: str | None, count: int, domain_names: tuple[str, ...],
                 kinds: tuple[str, ...], seed: int, backend_name: str,
                 solver: tuple[str, str | None] | None, budget: Any = None, record: Path | None = None) -> list[Any]:
    from ..executors.jobs import LLMSpec
    from ..flywheel.bench import bench_proposers
    from ..plugins import create_host
    from ..sandbox.select import make_backend

    host = create_host()
    installed = host.domains.names()
    if not installed:
        raise UsageError("no domains installed", hint="pip install autoenvscaling-terminal")
    names = list(domain_names) or ["terminal" if "terminal" in installed else installed[0]]
    for name in names:
        if name not in installed:
            raise UsageError(f"unknown domain {name!r}", hint=f"installed: {', '.join(installed)}")
    unknown = [k for k in kinds if k not in host.proposers.names()]
    if unknown:
        raise UsageError(f"unknown proposer kind(s): {', '.join(unknown)}", hint=f"known: {', '.join(host.proposers.names())}")
    backend = make_backend(backend_name, host)
    rows: list[Any] = []
    with contextlib.ExitStack() as servers:
        live = Path(servers.enter_context(tempfile.TemporaryDirectory(prefix="aes-bench-live-")))
        os.environ[LIVE_DIR_ENV] = str(live)  # the LLM calls in flight show in the progress lines
        served = _Served(servers)
        specs = {m: served(LLMSpec(model=m, base_url=base_url)) for m in models}
        llms = {m: spec.build(host) for m, spec in specs.items()}
        solver_agent = None
        if solver is not None:
            solver_spec = _solver_spec(solver[0], solver[1], {"turns": None, "tokens": None}, None)
            solver_spec = solver_spec.model_copy(update={"llm": served(solver_spec.llm)})
            solver_agent = solver_spec.build(host)
        with _RichProgress(live) as progress:
            arms = len([k for k in kinds if k != "procedural"]) * len(models) + ("procedural" in kinds)
            progress.round_started(0, count * arms * len(names), label="proposals")
            try:
                for name in names:
                    rows += await bench_proposers(host=host, backend=backend, domain=host.domains.get(name)(),
                                                  models=llms, n=count, seed=seed, kinds=kinds, solver=solver_agent,
                                                  budget=budget, record=record,
                                                  progress=lambda model, kind, outcome: progress.unit_done(None, outcome))
            finally:
                for llm in llms.values():
                    await llm.aclose()
                if solver_agent is not None:
                    await solver_agent.llm.aclose()
                await backend.aclose()
    return rows

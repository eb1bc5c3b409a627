"""The hooks a plugin may implement.

Register hooks receive a typed ``Registrar`` and only register things; behaviour lives in the
registered classes. Event hooks announce what happened and return nothing. Signatures only grow:
new optional arguments may be added, none removed or renamed.

docs/hooks.md is generated from this module: each hook's heading from its name and signature, its
section from its docstring, which is therefore Markdown (single backticks). After changing a hook
or its docstring, regenerate it with ``.venv/bin/python scripts/hookdoc.py --write``;
tests/plugins/test_hookspecs_documented.py fails while docs/hooks.md is stale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # types only: a plugin module importing hookimpl must not import all of these
    import click

    from ..agents.base import Agent
    from ..agents.tools import Tool
    from ..domains.base import Domain
    from ..executors.base import Executor
    from ..flywheel.summary import RoundSummary
    from ..gates.base import Gate, ValidationReport
    from ..llm.base import LLMBackend
    from ..proposers.base import Proposer
    from ..redteam.cheat import Cheat
    from ..runtime.verifier_runtime import VerifierRuntime
    from ..sandbox.base import SandboxBackend
    from ..suite.formats import TaskFormat
    from ..trainers.base import Trainer
    from .prerequisites import Prerequisite
    from .registry import Registrar

PROJECT = "autoenvscaling"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def autoenvscaling_register_domains(registrar: Registrar[Domain]) -> None:
    """Register `Domain` subclasses (or "pkg.mod:Class" paths): `registrar.add(name, cls)`.

    `autoenvscaling.domains.base.Domain`: environment families with procedural generators (`families`,
    `generate`), variants for the flywheel (`vary`) and a proposer kit for LLM proposers (`kit`).
    `autoenvscaling domains list` shows them; `generate --mix NAME=W` selects them by name. How the
    first-party domains lay out their packages: [plugin-authors.md](plugin-authors.md#how-the-first-party-domains-are-laid-out).

    ```python
    @hookimpl
    def autoenvscaling_register_domains(registrar):
        registrar.add("terminal", "autoenvscaling_terminal.domain:TerminalDomain")
    ```
    """


@hookspec
def autoenvscaling_register_sandbox_backends(registrar: Registrar[SandboxBackend]) -> None:
    """Register `SandboxBackend` classes: `registrar.add("bwrap", "pkg.mod:Class", extra=None)`.

    `autoenvscaling.sandbox.base.SandboxBackend`: a backend builds a task's environment (`prepare`) and
    creates isolated sandboxes from it (`create`). The core registers `bwrap` and `docker` (the latter
    with `extra="docker"`). `available()` and `protections()` are shown by `autoenvscaling doctor`.

    **Capabilities.** A backend declares what it can honour, in two layers. Class flags say what it
    can do where a machine allows it: `supports_gpus`, `supports_internet`, `supports_compose`,
    `supports_browser` (all False by default; bwrap sets GPUs, internet and browser, docker also compose).
    `supports_browser` means a browser the task's image brings (Debian's Chromium driven by Playwright,
    as the computer_use plugin's tasks do) can run in the backend's sandboxes.
    `capabilities() -> BackendCapabilities` says what it honours *on this machine* under its policy:
    `gpus` and `gpu_types` (detected: `/dev/nvidia*` nodes and `nvidia-smi -L`; docker also needs the
    engine's nvidia runtime or CDI devices), `internet` (granted under the current policy), `compose`,
    `browser`, `max_memory_mb`, `max_storage_mb`. The default implementation derives these from the
    flags and the policy; override it when the backend knows more.

    A task's `TaskRequirements` (`autoenvscaling.tasks.requirements`) come from task.toml:
    `[environment] gpus`, `gpu_types`, `allow_internet`, `memory_mb`, `storage_mb`, `browser = true` in
    `[metadata.autoenvscaling.environment]` (our addition) or a `browser` tool in
    `[metadata.autoenvscaling.agent] tools`, and a compose file in environment/. Lint matches them
    against the chosen backend's capabilities (`autoenvscaling.gates.requirements`): what the backend
    cannot do here is refused in one line naming a registered backend that can (`use --backend docker`),
    or the backends that could on another machine (`run on a machine with an NVIDIA GPU (bwrap or
    docker)`); what the policy clamps or denies (the internet offline, memory or disk that task.toml set
    above the caps) is a warning. `tasks run` refuses the same way, so a task never runs without its
    GPU, unless it says `gpu_optional = true` in `[metadata.autoenvscaling.environment]` (our addition):
    it then runs with the GPUs there are, possibly none, in a reduced mode its verifier reports (the
    gpu_kernels domain checks correctness in the Triton interpreter and reports its timing as
    unmeasured), and lint says so in a warning.

    ```python
    class MyBackend(SandboxBackend):
        name = "mine"
        supports_gpus = True

        def capabilities(self) -> BackendCapabilities:
            caps = super().capabilities()
            return caps if self.driver_ok() else caps.model_copy(update={"gpus": 0, "gpu_types": ()})
    ```

    ```python
    @hookimpl
    def autoenvscaling_register_sandbox_backends(registrar):
        registrar.add("firecracker", "autoenvscaling_fc.backend:FirecrackerBackend", extra=None)
    ```

    The two built-in backends, what they isolate and how: [sandboxes.md](sandboxes.md).
    """


@hookspec
def autoenvscaling_register_agents(registrar: Registrar[Agent]) -> None:
    """Register `Agent` classes that act in a live sandbox.

    `autoenvscaling.agents.base.Agent`: an agent acts in a live sandbox and returns a `Trajectory`.
    Built-ins: `oracle` (runs solution/solve.sh), `nop` (does nothing), `solver`.
    `autoenvscaling tasks run --agent NAME` selects one.
    """


@hookspec
def autoenvscaling_register_llm_backends(registrar: Registrar[LLMBackend]) -> None:
    """Register `LLMBackend` classes (an OpenAI-compatible client, a local model, ...).

    `autoenvscaling.llm.base.LLMBackend`: anything that answers `chat(...)` (an OpenAI-compatible
    server, a local transformers model, ...). Register heavy ones by import path with their extra,
    e.g. `extra="local"`.
    """


@hookspec
def autoenvscaling_register_formats(registrar: Registrar[TaskFormat]) -> None:
    """Register `TaskFormat` importers/exporters (Harbor, JSONL, Parquet, SWE-bench, ...).

    `autoenvscaling.suite.formats.TaskFormat`: classes that import or export tasks (Harbor directories,
    JSONL and Parquet rows, SWE-bench instances, ...). `suite import` and `suite export --format NAME`
    use them, and so does a domain's `import` command (`add_family_commands(..., import_format=NAME)`).
    """


@hookspec
def autoenvscaling_register_gates(registrar: Registrar[Gate]) -> None:
    """Register admission `Gate` classes; `Gate.order` places them cheapest first.

    `autoenvscaling.gates.base.Gate`. `Gate.order` places a gate in the pipeline (lint 10, build 20,
    oracle 30, null 40, red team 45, reset 50, flaky 60, decontamination 70, near-duplicate 80,
    calibration 90); cheapest first, and the first failing gate decides. `Gate.name` is the gate's id
    (reports, `--skip`). A domain adds its own lints here (e.g. a kernel import allow-list) and sets
    `domain = "<its name>"` on them: such a gate judges only tasks whose `[metadata.autoenvscaling]
    domain` is that domain, and is reported as skipped on every other task. The numbered gates and what
    each checks: [architecture.md](architecture.md#admission-gates).
    """


@hookspec
def autoenvscaling_register_proposers(registrar: Registrar[Proposer]) -> None:
    """Register `Proposer` classes (procedural, prompt, prompt+feedback, agentic, ...).

    `autoenvscaling.proposers.base.Proposer`: builders of new environments: procedural, prompt,
    prompt + environment feedback, agentic, or your own. The four built-in kinds:
    [architecture.md](architecture.md#proposers).
    """


@hookspec
def autoenvscaling_register_executors(registrar: Registrar[Executor]) -> None:
    """Register `Executor` classes that run many jobs in parallel (local pool, Ray, ...).

    `autoenvscaling.executors.base.Executor`. A job is plain data with its own `run` (the base class
    `autoenvscaling.executors.jobs.Job`; `AttemptJob` there, `ValidateJob` in `gates.validate`,
    `ProposeJob` in `flywheel.jobs`); an executor implements `submit(job) -> JobResult`
    (usually by running `executors.worker.run_job` wherever its workers are) and is built as
    `cls(concurrency=N, address=ADDR)`. Built-in: `local` (worker processes) and `ray` (Ray tasks,
    `extra="ray"`); see [scaling.md](scaling.md).
    """


@hookspec
def autoenvscaling_register_tools(registrar: Registrar[Tool]) -> None:
    '''Register agent `Tool` classes (`bash`, a browser, ...) a task's agent can be given.

    `autoenvscaling.agents.tools.Tool`. A tool has a name, a JSON schema for OpenAI-style tool calling
    and a rendering for the fenced-block text protocol, and it executes inside the attempt's sandbox
    (or against services the sandbox owns). The core registers `bash`; a task names the tools its agent
    gets in `[metadata.autoenvscaling.agent] tools` (Harbor's config check refuses unknown fields in
    `[agent]`; `[agent] tools`, which older tasks wrote, is still read).

    A task asks for tools by name; unset means `["bash"]`. `finish` is not a tool: it is how the
    agent's loop ends, and every agent has it.

    ```toml
    [metadata.autoenvscaling.agent]
    tools = ["bash", "kv"]
    ```

    The Tool API (`autoenvscaling.agents.tools`):

    - class attributes `name` (the registered name), `description` (one line the model reads),
      `parameters` (a JSON schema of an object: the arguments) and, for a tool that takes one text,
      `text_argument` (the argument a fenced block's plain body fills);
    - `async run(context: ToolContext, arguments) -> ToolOutcome`: `context.sandbox` is the attempt's
      live `Sandbox` (act only through it: `exec`, `upload_files`, `read_file`, never the host),
      `context.task` / `context.step` the task (None for an agent working outside a task),
      `context.limits` the agent's limits and `context.timeout` the seconds this call may take.
      `ToolOutcome(text=..., action=...)`: `text` goes back to the model, `action` (an `Action`, made
      with `self.action(arguments, output, seconds=..., exit_code=...)`) into the trajectory, with
      `action.tool` set to the tool's name.
    - The arguments are checked against `parameters` before `run` (type, properties, required,
      additionalProperties, enum, pattern, items, minimum/maximum, minLength/maxLength): a call that
      does not match, and any of our error types (`autoenvscaling.errors`) that `run` raises, reach
      the model as a one-line `error: <tool>: ...` observation and the attempt goes on. Make the schema
      the security boundary for names and paths (a `pattern` on a key stops `../` before `run`).
    - Models with native tool calling are offered `spec()`. Models without it are told about every
      tool but bash in the system prompt (`text_usage()`), and call one with a fenced block labelled
      with its name, holding a JSON object of arguments (or just the text of a `text_argument` tool):

      ````
      ```kv
      {"op": "set", "key": "colour", "value": "blue-42"}
      ```
      ````

      Override `text_usage()` and `arguments_from_block(body)` for another rendering. A ```bash block
      still runs a command and a line FINISH still ends the attempt, as before.

    ```python
    # mypkg/__init__.py: registered by import path, so nothing is imported at start-up
    @hookimpl
    def autoenvscaling_register_tools(registrar):
        registrar.add("kv", "mypkg.kv:KvTool")


    # mypkg/kv.py
    import time

    from autoenvscaling.agents.tools import Arguments, Tool, ToolContext, ToolOutcome


    class KvTool(Tool):
        """Store a value under a key, or read it back."""

        name = "kv"
        description = "Store a short text value under a key (op set), or read it back (op get)."
        parameters = {
            "type": "object",
            "properties": {"op": {"type": "string", "enum": ["set", "get"]},
                           "key": {"type": "string", "pattern": "^[a-z0-9_-]{1,32}$"},
                           "value": {"type": "string"}},
            "required": ["op", "key"],
            "additionalProperties": False,
        }

        async def run(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
            start = time.monotonic()
            if arguments["op"] == "set":
                await context.sandbox.upload_files({arguments["key"]: arguments["value"].encode()}, "/var/lib/kv")
                text = f"stored {arguments['key']}"
            else:
                data = await context.sandbox.read_file(f"/var/lib/kv/{arguments['key']}")
                text = "not set" if data is None else data.decode()
            return ToolOutcome(text=text, action=self.action(arguments, text, seconds=time.monotonic() - start))
    ```

    Whoever builds a `SolverAgent` gives it the registered tools: `SolverAgent(llm,
    tools=Toolbox.from_host(host))` (`autoenvscaling run` does). A task naming a tool that no plugin
    registers is a lint problem naming the registered tools, and a solver that cannot equip a task ends
    that attempt with an error saying so. A tool that needs configuration (the agentic proposer's
    `check`, which judges the task directory outside the sandbox) is an instance passed to
    `SolverAgent.converse(..., tools=[BashTool(), check])` instead of a registered class. A complete
    third-party example, with tests through the scripted OpenAI server and the CLI:
    `tests/fixtures/plugins/aes_testplugin/`.
    '''


@hookspec
def autoenvscaling_register_verifier_runtimes(registrar: Registrar[VerifierRuntime]) -> None:
    """Register `VerifierRuntime` classes: what verifiers need at verification time, provided
    read-only and out of the agent's reach (the offline shims, a browser client, a timing harness).

    `autoenvscaling.runtime.verifier_runtime.VerifierRuntime`: what a domain's verifiers need at
    verification time (a browser client, document libraries, a kernel timing harness). A runtime is
    provided read-only to the verifier only, never to the agent. The core's offline shims are one such
    runtime (`offline`).

    A runtime sets `name` (its mount point is `/opt/autoenvscaling-verifier/<name>`) and implements
    `applies(task, context: RuntimeContext) -> bool` (e.g. only its domain's tasks: `task_domain(task)`;
    `context.offline`, `context.backend`), `materialise() -> Path` (a host directory with its files,
    cached under the cache dir; `materialise_files(files, name, cache_dir)` writes one
    content-addressed and atomically) and `environment(mount) -> RuntimeEnv(path_prefix, env)`. The
    runner asks every registered runtime for each verification; bwrap binds the directory read-only
    into the verifier's command alone, docker uploads it after the agent's processes are gone and
    removes it after the reward is read. An example is in [verification.md](verification.md#verifier-runtimes).
    """


@hookspec
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    """Register `Cheat` classes: scripted agents that try to earn reward without doing the task,
    each with a positive control.

    `autoenvscaling.redteam.cheat.Cheat`, named `<domain>.<cheat>`. A cheat sets `name`, `domain` (its
    domain's tasks only; None for any task), `gate` (cheap and telling enough for the red-team admission
    gate) and gives `commands(task, step) -> list[str]` (shell lines run as the agent; override
    `run(...)` for other tools) and `control(task) -> Task | None`: its positive control, a copy of the
    task with the naive verifier it fools (`exists_only_control`, `naive_control`, `agent_view_control`
    help). The red-team gate (order 45, after null) runs every gate cheat that applies; `autoenvscaling
    tasks redteam DIR` runs them all; `autoenvscaling.testing.redteam.check_cheat(runner, task, cheat)`
    asserts in a plugin's tests that a cheat is held and fools its control. See
    [verification.md](verification.md#cheats-and-the-red-team).
    """


@hookspec
def autoenvscaling_register_trainers(registrar: Registrar[Trainer]) -> None:
    """Register `Trainer` classes: given the admitted pool and the rollouts, return an updated solver.

    `autoenvscaling.trainers.base.Trainer`: the flywheel's training phase gives a trainer the admitted
    pool and the round's rollouts and takes back an updated solver.
    `async train(pool, rollouts, solver: SolverSpec) -> TrainResult(solver, metrics, history)`: the
    solver is a spec (model name, base URL or checkpoint path, options), because every worker rebuilds
    it from that; the flywheel records the returned spec, metrics and per-step `history` rows (`step`,
    and e.g. `reward_mean`, `useful_group_rate`, `held_out_pass_rate`, which report.html draws as
    training curves) in run.sqlite, and the next round uses the spec (`autoenvscaling run --trainer
    NAME`). Before each `train` the flywheel calls `configure(context: TrainerContext, host)` (a no-op
    by default): `context.workdir` is this round's folder in the run (checkpoints go there, and a resumed
    run finds them), `context.backend`/`policy` name the run's sandbox backend, `context.options` are the
    run's trainer options (`FlywheelConfig.trainer_options`). The core registers no trainer; the
    `autoenvscaling-trainer` distribution registers `grpo` (`run --train`, see [training.md](training.md)).
    """


@hookspec
def autoenvscaling_register_prerequisites(registrar: Registrar[Prerequisite]) -> None:
    """Register `Prerequisite` checks that `autoenvscaling doctor` runs and reports (chromium, ray, ...).

    `autoenvscaling.plugins.prerequisites.Prerequisite`: a plugin says what it needs on the machine (a
    browser binary, a library, a GPU) and how to get it, so the core's doctor never has to know. A
    prerequisite has `needed_for` (which feature needs it) and `check() -> PrerequisiteStatus(ok,
    detail, hint)`; keep the check cheap and free of side effects (look for a file or a module spec;
    never install, download or start anything). The doctor lists every registered check under its
    registered name, in text and in `--json` (`prerequisites`: `name`, `plugin`, `needed_for`, `ok`,
    `detail`, `hint`); a check that raises, or whose module cannot be imported, is reported as failed,
    never as a crash. The core registers `bubblewrap`, `docker-engine` and `nvidia-gpu` next to its
    backends; an executor plugin registers what it needs the same way (e.g. a Ray executor's `ray`,
    checked with `importlib.util.find_spec("ray")`, never by importing it). A program that must be on
    PATH needs no `check()` of its own: `ProgramOnPath` looks for it.

    ```python
    from autoenvscaling.plugins import hookimpl
    from autoenvscaling.plugins.prerequisites import ProgramOnPath


    class Chromium(ProgramOnPath):
        needed_for = "computer-use tasks (Playwright with the system browser)"
        program = "chromium"
        install_hint = "apt-get install chromium"


    @hookimpl
    def autoenvscaling_register_prerequisites(registrar):
        registrar.add("chromium", Chromium)
    ```
    """


@hookspec
def autoenvscaling_register_commands(cli: click.Group) -> None:
    '''Add click commands or groups to the `autoenvscaling` CLI group `cli`.

    `cli` is a `click.Group`. Import click and anything else inside the hook, and keep the command's
    module imports lazy: this hook runs for `autoenvscaling --help`. A domain's group gets the usual
    `families`, `generate` (and `import`) commands from `autoenvscaling.cli.domain_cmds.add_family_commands`.

    ```python
    @hookimpl
    def autoenvscaling_register_commands(cli):
        import click

        @cli.command("mydomain-stats")
        def stats():
            """Summarise my domain's generators."""
            click.echo("...")
    ```
    '''


@hookspec
def autoenvscaling_task_validated(report: ValidationReport) -> None:
    """Announce a finished `ValidationReport` (valid or not).

    Called once per validated task with its `ValidationReport` (`autoenvscaling.gates.base`): `task`,
    `name`, `status` ("valid", "invalid", "error" or "timeout"), `reason` (one line), `gates` (each with
    `name`, `status`, `seconds`, `evidence`), `seconds`, `digest`. Valid or not. Use it to log, to
    collect statistics, or to push results elsewhere; do not block for long (it runs in the
    validator's process).

    ```python
    @hookimpl
    def autoenvscaling_task_validated(report):
        if not report.valid:
            print(f"{report.name}: {report.reason}")
    ```
    """


@hookspec
def autoenvscaling_round_ended(summary: RoundSummary) -> None:
    """Announce the end of a flywheel round with its `RoundSummary`.

    Called at the end of each flywheel round with its `RoundSummary` (`autoenvscaling.flywheel.summary`):
    the round number and what the round proposed, admitted and calibrated. Same rules as above: observe,
    do not steer.
    """

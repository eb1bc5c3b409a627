"""The core's own plugin: registers the built-ins exactly as a third-party plugin would, by import
path, so nothing is imported until it is used."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .hookspecs import hookimpl

if TYPE_CHECKING:  # types only: nothing is imported until it is used
    from ..agents.base import Agent
    from ..agents.tools import Tool
    from ..executors.base import Executor
    from ..gates.base import Gate
    from ..llm.base import LLMBackend
    from ..proposers.base import Proposer
    from ..redteam.cheat import Cheat
    from ..runtime.verifier_runtime import VerifierRuntime
    from ..sandbox.base import SandboxBackend
    from ..suite.formats import TaskFormat
    from .prerequisites import Prerequisite
    from .registry import Registrar


@hookimpl
def autoenvscaling_register_sandbox_backends(registrar: Registrar[SandboxBackend]) -> None:
    registrar.add("bwrap", "autoenvscaling.sandbox.bwrap:BwrapBackend",
                  description="bubblewrap sandboxes over copy-on-write root filesystems (Linux)")
    registrar.add("docker", "autoenvscaling.sandbox.docker_backend:DockerBackend", extra="docker",
                  description="containers through the Docker API (Docker, podman)")


@hookimpl
def autoenvscaling_register_agents(registrar: Registrar[Agent]) -> None:
    registrar.add("oracle", "autoenvscaling.agents.builtin:OracleAgent", description="runs solution/solve.sh")
    registrar.add("nop", "autoenvscaling.agents.builtin:NopAgent", description="does nothing")
    registrar.add("solver", "autoenvscaling.agents.solver:SolverAgent", description="LLM terminal agent (bash, finish and the task's tools)")


@hookimpl
def autoenvscaling_register_tools(registrar: Registrar[Tool]) -> None:
    registrar.add("bash", "autoenvscaling.agents.tools:BashTool", description="run a shell command in the sandbox")


@hookimpl
def autoenvscaling_register_executors(registrar: Registrar[Executor]) -> None:
    registrar.add("local", "autoenvscaling.executors.base:LocalExecutor",
                  description="worker processes on this machine (--jobs N)")
    registrar.add("ray", "autoenvscaling.executors.ray_executor:RayExecutor", extra="ray",
                  description="Ray tasks on a cluster (--ray-address) or a local Ray instance")


@hookimpl
def autoenvscaling_register_gates(registrar: Registrar[Gate]) -> None:
    for name, path in [
        ("lint", "autoenvscaling.gates.lint:LintGate"),
        ("build", "autoenvscaling.gates.runtime:BuildGate"),
        ("oracle", "autoenvscaling.gates.runtime:OracleGate"),
        ("null", "autoenvscaling.gates.runtime:NullGate"),
        ("redteam", "autoenvscaling.gates.redteam:RedTeamGate"),
        ("reset", "autoenvscaling.gates.runtime:ResetGate"),
        ("flaky", "autoenvscaling.gates.runtime:FlakinessGate"),
        ("decontamination", "autoenvscaling.gates.text:DecontaminationGate"),
        ("near-duplicate", "autoenvscaling.gates.text:NearDuplicateGate"),
    ]:
        registrar.add(name, path)
    registrar.add("calibration", "autoenvscaling.flywheel.calibration:CalibrationGate",
                  description="solver rollouts' mean reward inside the band, with spread (needs a solver)")


@hookimpl
def autoenvscaling_register_proposers(registrar: Registrar[Proposer]) -> None:
    registrar.add("procedural", "autoenvscaling.proposers.procedural:ProceduralProposer",
                  description="a domain's own generators, no LLM")
    registrar.add("prompt", "autoenvscaling.proposers.prompt:PromptProposer",
                  description="one LLM response becomes a task directory")
    registrar.add("prompt-feedback", "autoenvscaling.proposers.prompt:PromptFeedbackProposer",
                  description="prompt, plus the admission gates' errors fed back (up to 2 revisions)")
    registrar.add("agentic", "autoenvscaling.proposers.agentic:AgenticProposer",
                  description="an LLM agent builds the task in its own sandbox and runs the checks")


@hookimpl
def autoenvscaling_register_formats(registrar: Registrar[TaskFormat]) -> None:
    registrar.add("harbor", "autoenvscaling.suite.harbor_format:HarborFormat", description="Harbor task directories / dataset")
    registrar.add("jsonl", "autoenvscaling.suite.rows:JsonlFormat", description="one JSON row per task")
    registrar.add("parquet", "autoenvscaling.suite.rows:ParquetFormat", extra="export", description="Parquet rows (datasets-loadable)")


@hookimpl
def autoenvscaling_register_llm_backends(registrar: Registrar[LLMBackend]) -> None:
    registrar.add("openai", "autoenvscaling.llm.openai_backend:OpenAIBackend", extra="llm",
                  description="any OpenAI-compatible server (vLLM, SGLang, Ollama, hosted APIs)")
    registrar.add("transformers", "autoenvscaling.llm.local_backend:TransformersBackend", extra="local",
                  description="a local Hugging Face causal LM (default: embedded SmolLM2-135M-Instruct)")


@hookimpl
def autoenvscaling_register_prerequisites(registrar: Registrar[Prerequisite]) -> None:
    # Next to the backends that need them; the doctor reports whatever plugins register.
    registrar.add("bubblewrap", "autoenvscaling.sandbox.prerequisites:Bubblewrap")
    registrar.add("docker-engine", "autoenvscaling.sandbox.prerequisites:DockerEngine")
    registrar.add("nvidia-gpu", "autoenvscaling.sandbox.prerequisites:NvidiaGpu")
    registrar.add("ray", "autoenvscaling.executors.ray_executor:RayPrerequisite")


@hookimpl
def autoenvscaling_register_verifier_runtimes(registrar: Registrar[VerifierRuntime]) -> None:
    registrar.add("offline", "autoenvscaling.runtime.verifier_runtime:OfflineRuntime",
                  description="shims for apt-get, curl and uv/uvx, and provisioned wheels, for offline verifiers")


@hookimpl
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    for name, cls in GENERIC_CHEATS.items():
        registrar.add(name, f"autoenvscaling.redteam.generic:{cls}")


# The core's cheats (redteam/generic.py), by name: registered by path, imported when first used.
GENERIC_CHEATS = {"nothing": "Nothing", "empty-outputs": "EmptyOutputs", "copy-inputs": "CopyInputs",
                  "placeholder-outputs": "PlaceholderOutputs",
                  "instruction-echo": "InstructionEcho",
                  "wipe-workdir": "WipeWorkdir", "print-answer": "PrintAnswer", "prewrite-reward": "PrewriteReward",
                  "linger-writer": "LingerWriter", "plant-startup-hooks": "PlantStartupHooks",
                  "plant-optional-imports": "PlantOptionalImports", "shadow-tools": "ShadowTools",
                  "edit-visible-tests": "EditVisibleTests", "delete-visible-tests": "DeleteVisibleTests"}

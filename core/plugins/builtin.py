"""The core's own plugin: registers the built-ins exactly as a third-party plugin would, by import
path, so nothing is imported until it is used."""

from __future__ import annotations

from .hookspecs import hookimpl


@hookimpl
def autoenvscaling_register_sandbox_backends(registrar):  # noqa: ANN001 - hook signature
    registrar.add("bwrap", "autoenvscaling.sandbox.bwrap:BwrapBackend",
                  description="bubblewrap sandboxes over copy-on-write root filesystems (Linux)")
    registrar.add("docker", "autoenvscaling.sandbox.docker_backend:DockerBackend", extra="docker",
                  description="containers through the Docker API (Docker, podman)")


@hookimpl
def autoenvscaling_register_agents(registrar):  # noqa: ANN001
    registrar.add("oracle", "autoenvscaling.agents.builtin:OracleAgent", description="runs solution/solve.sh")
    registrar.add("nop", "autoenvscaling.agents.builtin:NopAgent", description="does nothing")
    registrar.add("solver", "autoenvscaling.agents.solver:SolverAgent", description="LLM terminal agent (bash, finish and the task's [agent] tools)")


@hookimpl
def autoenvscaling_register_tools(registrar):  # noqa: ANN001
    registrar.add("bash", "autoenvscaling.agents.tools:BashTool", description="run a shell command in the sandbox")


@hookimpl
def autoenvscaling_register_executors(registrar):  # noqa: ANN001
    registrar.add("local", "autoenvscaling.executors.base:LocalExecutor",
                  description="worker processes on this machine (--jobs N)")
    registrar.add("ray", "autoenvscaling.executors.ray_executor:RayExecutor", extra="ray",
                  description="Ray tasks on a cluster (--ray-address) or a local Ray instance")


@hookimpl
def autoenvscaling_register_gates(registrar):  # noqa: ANN001
    for name, path in [
        ("lint", "autoenvscaling.gates.lint:LintGate"),
        ("build", "autoenvscaling.gates.runtime:BuildGate"),
        ("oracle", "autoenvscaling.gates.runtime:OracleGate"),
        ("null", "autoenvscaling.gates.runtime:NullGate"),
        ("reset", "autoenvscaling.gates.runtime:ResetGate"),
        ("flaky", "autoenvscaling.gates.runtime:FlakinessGate"),
        ("decontamination", "autoenvscaling.gates.text:DecontaminationGate"),
        ("near-duplicate", "autoenvscaling.gates.text:NearDuplicateGate"),
    ]:
        registrar.add(name, path)
    registrar.add("calibration", "autoenvscaling.flywheel.calibration:CalibrationGate",
                  description="solver rollouts' mean reward inside the band, with spread (needs a solver)")


@hookimpl
def autoenvscaling_register_proposers(registrar):  # noqa: ANN001
    registrar.add("procedural", "autoenvscaling.proposers.procedural:ProceduralProposer",
                  description="a domain's own generators, no LLM")
    registrar.add("prompt", "autoenvscaling.proposers.prompt:PromptProposer",
                  description="one LLM response becomes a task directory")
    registrar.add("prompt-feedback", "autoenvscaling.proposers.prompt:PromptFeedbackProposer",
                  description="prompt, plus the admission gates' errors fed back (up to 2 revisions)")
    registrar.add("agentic", "autoenvscaling.proposers.agentic:AgenticProposer",
                  description="an LLM agent builds the task in its own sandbox and runs the checks")


@hookimpl
def autoenvscaling_register_formats(registrar):  # noqa: ANN001
    registrar.add("harbor", "autoenvscaling.suite.harbor_format:HarborFormat", description="Harbor task directories / dataset")
    registrar.add("jsonl", "autoenvscaling.suite.rows:JsonlFormat", description="one JSON row per task")
    registrar.add("parquet", "autoenvscaling.suite.rows:ParquetFormat", extra="export", description="Parquet rows (datasets-loadable)")


@hookimpl
def autoenvscaling_register_llm_backends(registrar):  # noqa: ANN001
    registrar.add("openai", "autoenvscaling.llm.openai_backend:OpenAIBackend", extra="llm",
                  description="any OpenAI-compatible server (vLLM, SGLang, Ollama, hosted APIs)")
    registrar.add("transformers", "autoenvscaling.llm.local_backend:TransformersBackend", extra="local",
                  description="a local Hugging Face causal LM (default: embedded SmolLM2-135M-Instruct)")


@hookimpl
def autoenvscaling_register_prerequisites(registrar):  # noqa: ANN001
    # Next to the backends that need them; the doctor reports whatever plugins register.
    registrar.add("bubblewrap", "autoenvscaling.sandbox.prerequisites:Bubblewrap")
    registrar.add("docker-engine", "autoenvscaling.sandbox.prerequisites:DockerEngine")
    registrar.add("nvidia-gpu", "autoenvscaling.sandbox.prerequisites:NvidiaGpu")
    registrar.add("ray", "autoenvscaling.executors.ray_executor:RayPrerequisite")


@hookimpl
def autoenvscaling_register_verifier_runtimes(registrar):  # noqa: ANN001
    registrar.add("offline", "autoenvscaling.runtime.verifier_runtime:OfflineRuntime",
                  description="shims for apt-get, curl and uv/uvx, and provisioned wheels, for offline verifiers")

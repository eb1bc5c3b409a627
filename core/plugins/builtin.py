"""The core's own plugin: declares the built-ins exactly as a third-party plugin would (``declare``,
by import path), so nothing is imported until it is used."""

from __future__ import annotations

from .declare import declare

# The core's cheats (redteam/generic.py), by name: registered by path, imported when first used.
GENERIC_CHEATS = {"nothing": "Nothing", "empty-outputs": "EmptyOutputs", "copy-inputs": "CopyInputs",
                  "placeholder-outputs": "PlaceholderOutputs",
                  "instruction-echo": "InstructionEcho",
                  "wipe-workdir": "WipeWorkdir", "print-answer": "PrintAnswer", "prewrite-reward": "PrewriteReward",
                  "linger-writer": "LingerWriter", "plant-startup-hooks": "PlantStartupHooks",
                  "plant-optional-imports": "PlantOptionalImports", "shadow-tools": "ShadowTools",
                  "edit-visible-tests": "EditVisibleTests", "delete-visible-tests": "DeleteVisibleTests"}

_GATES = "autoenvscaling.gates"

declare(
    globals(),
    sandbox_backends={
        "bwrap": ("autoenvscaling.sandbox.bwrap:BwrapBackend", "bubblewrap sandboxes over copy-on-write root filesystems (Linux)"),
        "docker": ("autoenvscaling.sandbox.docker_backend:DockerBackend", "containers through the Docker API (Docker, podman)",
                   "docker"),
    },
    agents={
        "oracle": ("autoenvscaling.agents.builtin:OracleAgent", "runs solution/solve.sh"),
        "nop": ("autoenvscaling.agents.builtin:NopAgent", "does nothing"),
        "solver": ("autoenvscaling.agents.solver:SolverAgent", "LLM terminal agent (bash, finish and the task's tools)"),
    },
    tools={"bash": ("autoenvscaling.agents.tools:BashTool", "run a shell command in the sandbox")},
    executors={
        "local": ("autoenvscaling.executors.base:LocalExecutor", "worker processes on this machine (--jobs N)"),
        "ray": ("autoenvscaling.executors.ray_executor:RayExecutor",
                "Ray tasks on a cluster (--ray-address) or a local Ray instance", "ray"),
    },
    gates={
        "lint": f"{_GATES}.lint:LintGate",
        "build": f"{_GATES}.runtime:BuildGate",
        "oracle": f"{_GATES}.runtime:OracleGate",
        "null": f"{_GATES}.runtime:NullGate",
        "redteam": f"{_GATES}.redteam:RedTeamGate",
        "reset": f"{_GATES}.runtime:ResetGate",
        "flaky": f"{_GATES}.runtime:FlakinessGate",
        "decontamination": f"{_GATES}.text:DecontaminationGate",
        "near-duplicate": f"{_GATES}.text:NearDuplicateGate",
        "calibration": ("autoenvscaling.flywheel.calibration:CalibrationGate",
                        "solver rollouts' mean reward inside the band, with spread (needs a solver)"),
    },
    proposers={
        "procedural": ("autoenvscaling.proposers.procedural:ProceduralProposer", "a domain's own generators, no LLM"),
        "prompt": ("autoenvscaling.proposers.prompt:PromptProposer", "one LLM response becomes a task directory"),
        "prompt-feedback": ("autoenvscaling.proposers.prompt:PromptFeedbackProposer",
                            "prompt, plus the admission gates' errors fed back (up to 2 revisions)"),
        "agentic": ("autoenvscaling.proposers.agentic:AgenticProposer",
                    "an LLM agent builds the task in its own sandbox and runs the checks"),
    },
    formats={
        "harbor": ("autoenvscaling.suite.harbor_format:HarborFormat", "Harbor task directories / dataset"),
        "jsonl": ("autoenvscaling.suite.rows:JsonlFormat", "one JSON row per task"),
        "parquet": ("autoenvscaling.suite.rows:ParquetFormat", "Parquet rows (datasets-loadable)", "export"),
    },
    llm_backends={
        "openai": ("autoenvscaling.llm.openai_backend:OpenAIBackend",
                   "any OpenAI-compatible server (vLLM, SGLang, Ollama, hosted APIs)", "llm"),
        "transformers": ("autoenvscaling.llm.local_backend:TransformersBackend",
                         "a local Hugging Face causal LM (default: embedded SmolLM2-135M-Instruct)", "local"),
        "llama-server": ("autoenvscaling.llm.serve:LlamaServerBackend",
                         "a local model served by llama.cpp (`autoenvscaling serve`; run/generate start one)", "serve"),
    },
    # next to the backends that need them; the doctor reports whatever plugins register
    prerequisites={
        "bubblewrap": "autoenvscaling.sandbox.prerequisites:Bubblewrap",
        "docker-engine": "autoenvscaling.sandbox.prerequisites:DockerEngine",
        "nvidia-gpu": "autoenvscaling.sandbox.prerequisites:NvidiaGpu",
        "ray": "autoenvscaling.executors.ray_executor:RayPrerequisite",
    },
    verifier_runtimes={"offline": ("autoenvscaling.runtime.verifier_runtime:OfflineRuntime",
                                   "shims for apt-get, curl and uv/uvx, and provisioned wheels, for offline verifiers")},
    cheats={name: f"autoenvscaling.redteam.generic:{cls}" for name, cls in GENERIC_CHEATS.items()},
)

"""The ``kernel-harness`` verifier runtime: the installed plugin's harness, for gpu_kernels tasks.

tests/ carries a copy of the harness so a task stays a complete Harbor task that runs anywhere. Here
the verifier gets the installed plugin's copy at /opt/autoenvscaling-verifier/kernel-harness instead
(test.sh prefers it), so a task whose tests/ was written by someone else (an LLM proposer, an import)
is still judged by the lint, comparison and timing this plugin ships. Like every verifier runtime it
exists only for test.sh, read-only and out of the agent's reach.
"""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.api import RuntimeContext, Task, VerifierRuntime, materialise_files, task_domain

from .render import DOMAIN, harness_files


class KernelHarness(VerifierRuntime):
    name = "kernel-harness"

    def applies(self, task: Task, context: RuntimeContext) -> bool:
        return task_domain(task) == DOMAIN

    def materialise(self) -> Path:
        files = {name: (text.encode(), name.endswith(".sh")) for name, text in harness_files().items()}
        return materialise_files(files, self.name, self.cache_dir)

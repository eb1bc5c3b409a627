"""The ``kernel-harness`` verifier runtime: the installed plugin's harness, for gpu_kernels tasks.

tests/ carries a copy of the harness so a task stays a complete Harbor task that runs anywhere. Here
the verifier gets the installed plugin's copy at /opt/autoenvscaling-verifier/kernel-harness instead
(test.sh prefers it), so a task whose tests/ was written by someone else (an LLM proposer, an import)
is still judged by the lint, comparison and timing this plugin ships. Like every verifier runtime it
exists only for test.sh, read-only and out of the agent's reach.

Where tests/test.sh is the harness's own (it only runs ``python3 -I kernelcheck.py``), the runtime
offers that program to a warm interpreter that imported torch once (``warm``): on bwrap, the
verifications of many attempts then start from a fork of it instead of importing torch each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from autoenvscaling.api import (WARM_INPUTS, RuntimeContext, Task, VerifierRuntime, WarmCommand, materialise_files,
                                task_domain)

from .render import DOMAIN, SOLUTION_PATH, harness_files


class KernelHarness(VerifierRuntime):
    name = "kernel-harness"

    def applies(self, task: Task, context: RuntimeContext) -> bool:
        return task_domain(task) == DOMAIN

    def materialise(self) -> Path:
        files = {name: (text.encode(), name.endswith(".sh")) for name, text in harness_files().items()}
        return materialise_files(files, self.name, self.cache_dir)

    def warm(self, task: Task, tests: Mapping[str, bytes]) -> WarmCommand | None:
        if tests.get("test.sh") != harness_files()["test.sh"].encode():
            return None  # a test.sh of its own: run as it is
        return WarmCommand(script=f"{self.mount}/kernelcheck.py", args=("--solution", f"{WARM_INPUTS}{SOLUTION_PATH}"),
                           preload=("torch",), inputs=(SOLUTION_PATH,), task_paths=("/app",))

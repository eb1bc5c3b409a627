"""The ``profcheck`` verifier runtime: professional tasks' checker in a warm interpreter.

test.sh only runs ``python3 -I /tests/profcheck.py``, which spends most of a verification importing
the document libraries (openpyxl, python-docx, icalendar, the ``formulas`` engine) before it reads
a single cell. Where tests/test.sh is this plugin's own, the runtime offers the same program to a
warm interpreter that imported them once (``warm``): on bwrap, the verifications of many attempts
then start from a fork of it. The program is the task's own tests/profcheck.py; it reads the
attempt's declared outputs from the copies the warm interpreter is handed (``--outputs-under``) and
everything else of the workspace as the image has it, which is what test.sh sees under the outputs
view. The runtime's folder holds only a README: it exists to offer the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from autoenvscaling.api import (WARM_INPUTS, RuntimeContext, Task, VerifierRuntime, WarmCommand, materialise_files,
                                task_domain)

from .render import DOMAIN, package_text

#: what profcheck.py and the families' checks import, in the plugin's image (the task's image has
#: them: a module missing there stops the warm interpreter, and the verification runs cold)
PRELOAD = ("openpyxl", "docx", "icalendar", "formulas")
WORKSPACE = "/app"
README = (b"The profcheck verifier runtime of autoenvscaling-professional: no files of its own. It offers\n"
          b"tests/profcheck.py to a warm interpreter that imported the document libraries once.\n")


class ProfcheckRuntime(VerifierRuntime):
    name = "profcheck"

    def applies(self, task: Task, context: RuntimeContext) -> bool:
        return task_domain(task) == DOMAIN

    def materialise(self) -> Path:
        return materialise_files({"README": (README, False)}, self.name, self.cache_dir)

    def warm(self, task: Task, tests: Mapping[str, bytes]) -> WarmCommand | None:
        if tests.get("test.sh") != package_text("verifier", "test.sh").encode():
            return None  # a test.sh of its own: run as it is
        outputs = tuple(p if p.startswith("/") else "/" + p for p in task.config.verifier.outputs)
        if not outputs or not all(p.startswith(WORKSPACE + "/") and not p.endswith("/") for p in outputs):
            return None  # a folder, or an output outside the workspace each request gets as the image has it
        return WarmCommand(script="/tests/profcheck.py", args=("--outputs-under", WARM_INPUTS),
                           preload=PRELOAD, inputs=outputs, task_paths=(WORKSPACE,))

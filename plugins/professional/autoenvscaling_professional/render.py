"""Turn a family's ``Draft`` into a Harbor task (a core ``Task``).

    task.toml                    [metadata] difficulty/category/tags, [metadata.autoenvscaling] provenance
    instruction.md               what a manager would write
    environment/Dockerfile       the domain-wide preamble (Python with openpyxl, python-docx, pypdf,
                                 reportlab, icalendar and the ``formulas`` spreadsheet engine; identical
                                 in every task, so the layer cache builds it once) + COPY of the workspace
    environment/app/...          the workspace /app starts with
    tests/test.sh                runs tests/profcheck.py (python3 -I); the verifier sees the image
                                 plus only the declared outputs (verifier outputs)
    tests/profcheck.py           the domain's checker library (verifier/profcheck.py, verbatim)
    tests/aes_verifier.py        the verifier library profcheck.py imports (autoenvscaling.verifier)
    tests/check_<family>.py      the family's checks (verifier/checks/<family>.py, verbatim)
    tests/spec.json              hidden: expected values, tolerances, digests of inputs to keep
    tests/original/...           hidden: copies of the inputs the checker counts changes against
    solution/solve.sh            runs solution/solve.py (solutions/<family>.py) with solution/params.json
    solution/controls/*.sh       negative controls for the professional-controls gate: "untouched" (the
                                 input handed back as the answer), "empty" (valid empty outputs) and
                                 "wrong" (the family's plausible wrong answer, at most 0.5)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
import zipfile

from autoenvscaling.api import Task, TaskFile, package_reader, render_task, verifier_library

from .families.base import Draft, dated_zip, label_of

DOMAIN = "professional"
PREAMBLE = (
    "FROM debian:bookworm\n"
    "ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1\n"
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
    "    python3 python3-pip python3-openpyxl python3-docx python3-pypdf python3-reportlab python3-icalendar \\\n"
    "    python3-numpy python3-scipy python3-regex python3-dateutil python3-tqdm python3-click ca-certificates \\\n"
    "    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb\n"
    "# formulas: a spreadsheet engine; the verifier computes the agent's formulas with it\n"
    "RUN python3 -m pip install --break-system-packages formulas==1.3.4 schedula==1.6.15 numpy-financial==1.0.0\n"
    "WORKDIR /app\n"
)
CONTROLS = ("untouched", "empty", "wrong")


package_text = package_reader(__package__)


PACKAGE_SUFFIXES = (".xlsx", ".docx")
ZIP_DATE = dt.datetime(2020, 1, 1)
_STAMPS = re.compile(rb"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*(</dcterms:)")


def stable_package(data: bytes) -> bytes:
    """An Office package with the clock taken out: openpyxl and python-docx date the zip entries and
    the document's created/modified properties with the time of writing, so the same seed would give
    different bytes a second later. Entries are re-zipped dated ``ZIP_DATE``, the properties set to it."""
    return dated_zip(data, ZIP_DATE, lambda name, body: _STAMPS.sub(rb"\g<1>2020-01-01T00:00:00Z\g<2>", body)
                     if name == "docProps/core.xml" else body)


def verifier_outputs(outputs: dict[str, str]) -> list[str]:
    """The task's verifier ``outputs``: the only paths of the agent's the verifier sees (the rest
    of /app and of the image is put back as it was built). An output inside a folder
    (``letters/AC-1.docx``) declares the whole folder, so letters written for the wrong recipients
    reach the checker too."""
    return sorted({f"/app/{rel.split('/', 1)[0]}" for rel in outputs})


def render(family: str, draft: Draft, *, seed: int, level: int) -> Task:
    label = label_of(level)
    name = f"{DOMAIN}-{family}-{draft.kind}-l{level}-s{seed}".replace("_", "-")
    workspace = {rel: stable_package(data) if rel.lower().endswith(PACKAGE_SUFFIXES) and zipfile.is_zipfile(io.BytesIO(data))
                 else data for rel, data in draft.files.items()}
    spec = {**draft.spec, "family": family, "outputs": dict(draft.outputs)}
    # inputs the agent must not edit: every workspace file that is not an output
    spec["keep"] = {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(workspace.items())
                    if rel not in draft.outputs}
    params = {**draft.params, "outputs": dict(draft.outputs)}
    files: dict[str, bytes | str | TaskFile] = {
        "environment/Dockerfile": PREAMBLE + "COPY app/ /app/\n",
        "tests/test.sh": package_text("verifier", "test.sh"),
        "tests/profcheck.py": package_text("verifier", "profcheck.py"),
        **{f"tests/{n}": text for n, text in verifier_library().items()},  # profcheck.py's library
        f"tests/check_{family}.py": package_text("verifier", "checks", f"{family}.py"),
        "tests/spec.json": json.dumps(spec, indent=1, sort_keys=True, default=str) + "\n",
        "solution/solve.sh": "#!/bin/bash\n# Reference solution: solve.py reads the workspace and writes the outputs.\n"
                             "set -eu\ncd /app\npython3 /solution/solve.py\n",
        "solution/solve.py": package_text("solutions", f"{family}.py"),
        "solution/params.json": json.dumps(params, indent=1, sort_keys=True, default=str) + "\n",
        "solution/controls/untouched.sh": "#!/bin/bash\n# Negative control: the input handed back as the answer. Must score 0.\n"
                                          "set -eu\ncd /app\npython3 /solution/controls/untouched_outputs.py\n",
        "solution/controls/untouched_outputs.py": package_text("verifier", "untouched_outputs.py"),
        "solution/controls/empty.sh": "#!/bin/bash\n# Negative control: valid but empty outputs. Must score 0.\n"
                                      "set -eu\ncd /app\npython3 /solution/controls/empty_outputs.py\n",
        "solution/controls/empty_outputs.py": package_text("verifier", "empty_outputs.py"),
        "solution/controls/wrong.sh": "#!/bin/bash\n# Negative control: the plausible wrong answer "
                                      f"({draft.mistake}). Must score at most 0.5.\nset -eu\ncd /app\npython3 /solution/solve.py --wrong\n",
    }
    for rel, data in sorted(workspace.items()):
        files[f"environment/app/{rel}"] = TaskFile(data=data)
    for rel in draft.originals:
        files[f"tests/original/{rel}"] = TaskFile(data=workspace[rel])
    tags = sorted({family.replace("_", "-"), draft.kind.replace("_", "-"), *draft.tags})
    return render_task(
        domain=DOMAIN, family=family, seed=seed, difficulty=label, name=name, instruction=draft.instruction,
        description=f"{family.replace('_', ' ')}: {draft.kind.replace('_', ' ')} ({label})", files=files, tags=tags,
        verifier={"timeout_sec": 300.0, "outputs": verifier_outputs(draft.outputs)},
        agent={"timeout_sec": draft.agent_timeout_sec},
        environment={"build_timeout_sec": 1800.0, "cpus": 1, "memory_mb": 2048, "storage_mb": 2048, "workdir": "/app"},
        parameters={"kind": draft.kind, "level": level, "mistake": draft.mistake, "outputs": dict(draft.outputs),
                    **draft.parameters})

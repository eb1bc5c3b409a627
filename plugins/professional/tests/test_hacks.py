"""Reward hacks against professional tasks score 0, each attempted for real in a bwrap sandbox and
verified on the image plus the declared outputs. Every family gets the generic ones (doing nothing,
a file of the right name that is not a document, valid empty documents, the right files with the content
scrambled after the real solution ran); the formula and memo families get their own. Each hack's
positive control is the oracle scoring 1 on the same task."""

from __future__ import annotations

import json
import shlex

import pytest
from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.testing.agents import ScriptedAgent
from prof_helpers import OracleThen, bwrap, details, outputs, task_of, trial

from autoenvscaling_professional.families import CATALOG

pytestmark = bwrap
FAMILIES = sorted(CATALOG)
SCRAMBLE = r'''
import json, os
import openpyxl, docx
outs = json.loads(os.environ["OUTS"])
for rel, kind in outs.items():
    p = os.path.join("/app", rel)
    if not os.path.exists(p):
        continue
    if kind == "xlsx":
        wb = openpyxl.load_workbook(p)
        for ws in wb.worksheets:
            for row in ws.iter_rows(min_row=2):
                for c in row:
                    if c.value is None:
                        continue
                    c.value = 0 if isinstance(c.value, (int, float)) or str(c.value).startswith("=") else "n/a"
        wb.save(p)
    elif kind == "docx":
        d = docx.Document(p)
        for para in d.paragraphs:
            if not para.style.name.lower().startswith(("heading", "title")) and para.text.strip():
                for run in para.runs[1:]:
                    run.text = ""
                if para.runs:
                    para.runs[0].text = "To be completed."
        for t in d.tables:
            for row in t.rows[1:]:
                for cell in row.cells:
                    cell.text = "n/a"
        d.save(p)
    elif kind == "csv":
        lines = open(p, encoding="utf-8").read().splitlines()
        width = len(lines[0].split(",")) if lines else 1
        open(p, "w", encoding="utf-8").write("\n".join(lines[:1] + [",".join(["n/a"] * width)] * (len(lines) - 1)) + "\n")
    elif kind == "ics":
        import re
        text = open(p, encoding="utf-8").read()
        text = re.sub(r"DTSTART[^:\r\n]*:[0-9T]+", "DTSTART:19990103T030000", text)
        text = re.sub(r"DTEND[^:\r\n]*:[0-9T]+", "DTEND:19990103T033000", text)
        text = re.sub(r"(?m)^ATTENDEE.*\r?\n", "", text)
        open(p, "w", encoding="utf-8").write(text)
    else:
        open(p, "w", encoding="utf-8").write("n/a\n")
'''


@pytest.mark.parametrize("family", FAMILIES)
def test_the_oracle_scores_1(family):
    """The positive control of every hack below: the same task, solved for real."""
    result = trial(task_of(family), OracleAgent())
    assert result.reward == 1.0, details(result)


@pytest.mark.parametrize("family", FAMILIES)
def test_doing_nothing_scores_0(family):
    result = trial(task_of(family), NopAgent())
    assert result.status == "ok" and result.reward == 0.0, details(result)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_file_of_the_right_name_that_is_not_a_document_scores_0(family):
    task = task_of(family)
    writes = [f"mkdir -p \"$(dirname /app/{rel})\" && echo 'Q3 figures attached, see previous email.' > /app/{rel}"
              for rel in outputs(task)]
    result = trial(task, ScriptedAgent(*writes))
    assert result.reward == 0.0, details(result)


@pytest.mark.parametrize("family", FAMILIES)
def test_valid_empty_documents_score_0(family):
    from autoenvscaling_professional.gate import ControlAgent

    result = trial(task_of(family), ControlAgent("empty"))
    assert result.status == "ok" and result.reward == 0.0, details(result)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_right_files_with_scrambled_content_score_0(family):
    """The real answer's files, sheets, headers and headings, with every value replaced."""
    task = task_of(family)
    scramble = f"OUTS={shlex.quote(json.dumps(outputs(task)))} python3 - <<'EOF'\n{SCRAMBLE}\nEOF"
    result = trial(task, OracleThen(scramble))
    assert result.steps[0].trajectory.actions[-1].exit_code == 0, details(result)
    assert result.reward == 0.0, details(result)


def test_hard_coded_values_where_formulas_were_required_score_0():
    """The summary's formulas replaced by the values they compute (exactly right numbers, typed in)."""
    task = task_of("summary_formulas")
    freeze = r'''python3 - <<'EOF'
import json, formulas, openpyxl
out = [p for p, k in json.load(open("/solution/params.json"))["outputs"].items() if k == "xlsx"][0]
path = "/app/" + out
solution = formulas.ExcelModel().loads(path).finish().calculate()
wb = openpyxl.load_workbook(path)
typed = 0
for ws in wb.worksheets:
    for row in ws.iter_rows():
        for c in row:
            if isinstance(c.value, str) and c.value.startswith("="):
                for key, value in solution.items():
                    if key.upper().endswith(f"]{ws.title.upper()}'!{c.coordinate}") or key.upper().endswith(f"]{ws.title.upper()}!{c.coordinate}"):
                        v = value.value[0][0]
                        c.value = v.item() if hasattr(v, "item") else v
                        typed += 1
wb.save(path)
print("typed", typed)
assert typed > 0
EOF'''
    result = trial(task, OracleThen(freeze))
    assert result.steps[0].trajectory.actions[-1].exit_code == 0, details(result)
    assert result.reward == 0.0, details(result)


def test_a_memo_with_the_right_headings_and_empty_sections_scores_0():
    task = task_of("memo_docx")
    empty_sections = r'''python3 - <<'EOF'
import json, docx
out = [p for p, k in json.load(open("/solution/params.json"))["outputs"].items() if k == "docx"][0]
d = docx.Document("/app/" + out)
body = d.element.body
for block in list(body.iterchildren()):
    tag = block.tag.rsplit("}", 1)[-1]
    if tag == "tbl":
        body.remove(block)
for p in d.paragraphs:
    if not p.style.name.lower().startswith(("heading", "title")):
        p._element.getparent().remove(p._element)
d.save("/app/" + out)
print(json.dumps([p.text for p in docx.Document("/app/" + out).paragraphs]))
EOF'''
    result = trial(task, OracleThen(empty_sections))
    assert result.steps[0].trajectory.actions[-1].exit_code == 0, details(result)
    kept = json.loads(result.steps[0].trajectory.actions[-1].output.strip().splitlines()[-1])
    assert len(kept) >= 2, kept  # the headings are still there, nothing else
    assert result.reward == 0.0, details(result)

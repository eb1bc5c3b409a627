"""Fast tests of the professional plugin: registration, generation (determinism, every level, the
static gates), the lint gate's own checks and the checker library's value parsing and scoring."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import time
from importlib import resources

import pytest
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.tasks import Task, TaskFile
from click.testing import CliRunner

from autoenvscaling_professional.domain import ProfessionalDomain
from autoenvscaling_professional.families import CATALOG
from autoenvscaling_professional.families.base import MAX_LEVEL, MIN_LEVEL
from autoenvscaling_professional.gate import ProfessionalLintGate

FAMILIES = sorted(CATALOG)


def profcheck():
    from autoenvscaling_professional.verifier import profcheck

    return profcheck


def lint(task: Task) -> tuple[str, str]:
    from autoenvscaling.gates.lint import LintGate

    ctx = GateContext(backend=None, runner=None, settings=GateSettings())
    core = asyncio.run(LintGate().check(task, ctx))
    return core.status, ProfessionalLintGate.problem(task)


def test_the_plugin_registers_its_domain_gates_and_command():
    from autoenvscaling.cli.main import cli
    from autoenvscaling.plugins import create_host

    host = create_host()
    assert "professional" in host.domains.names()
    assert {"professional-lint", "professional-controls"} <= set(host.gates.names())
    result = CliRunner().invoke(cli, ["professional", "families", "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(r["name"] for r in json.loads(result.output)) == FAMILIES


def test_there_are_at_least_eight_families_each_with_its_three_parts():
    root = resources.files("autoenvscaling_professional")
    assert len(FAMILIES) >= 8
    for name in FAMILIES:
        for part in (("families", f"{name}.py"), ("verifier", "checks", f"{name}.py"), ("solutions", f"{name}.py")):
            assert root.joinpath(*part).is_file(), (name, part)


@pytest.mark.parametrize("family", FAMILIES)
def test_generation_is_deterministic_seeded_and_passes_the_static_gates(family):
    domain = ProfessionalDomain()
    levels = range(MIN_LEVEL, MAX_LEVEL + 1)
    first = [domain.generate_level(family, seed=5, level=level) for level in levels]
    time.sleep(1.1)  # Office packages carry the time of writing: a second later must change nothing
    for level, a in zip(levels, first):
        b = domain.generate_level(family, seed=5, level=level)
        assert a.files == b.files and a.instruction == b.instruction, (family, level)
        assert a.provenance.domain == "professional" and a.provenance.family == family
        assert lint(a) == ("pass", ""), (family, level, lint(a))
    other = domain.generate(family, seed=6)
    same = domain.generate(family, seed=5)
    assert other.files != same.files


@pytest.mark.parametrize("family", FAMILIES)
def test_harder_levels_ask_for_more(family):
    """More data or more requirements: the workspace or the hidden spec grows with the level."""
    domain = ProfessionalDomain()
    sizes = []
    for level in (1, 3, 5):
        task = domain.generate_level(family, seed=2, level=level)
        workspace = sum(len(f.data) for p, f in task.files.items() if p.startswith("environment/app/"))
        sizes.append((workspace, len(task.files["tests/spec.json"].data)))
    assert sizes[0][0] < sizes[2][0] or sizes[0][1] < sizes[2][1], sizes


def test_vary_moves_one_level_or_to_the_neighbour_family():
    domain = ProfessionalDomain()
    parent = domain.generate("format_sheet", seed=3, difficulty="medium")
    harder = domain.vary(parent, direction="harder", seed=4)
    simpler = domain.vary(parent, direction="simpler", seed=4)
    different = domain.vary(parent, direction="different", seed=4)
    assert harder.provenance.parameters["level"] == 3 and simpler.provenance.parameters["level"] == 1
    assert different.provenance.family == CATALOG["format_sheet"].neighbour
    assert harder.provenance.parent == parent.name and different.provenance.direction == "different"


def test_generate_command_writes_task_directories(tmp_path):
    from autoenvscaling.cli.main import cli
    from autoenvscaling.tasks import read_task

    result = CliRunner().invoke(cli, ["professional", "generate", "--family", "format_sheet", "--difficulty", "easy",
                                      "--seeds", "0-1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    dirs = sorted(p for p in tmp_path.iterdir())
    assert [d.name for d in dirs] == ["professional-format-sheet-house-style-l1-s0", "professional-format-sheet-house-style-l1-s1"]
    assert read_task(dirs[0]).provenance.family == "format_sheet"
    bad = CliRunner().invoke(cli, ["professional", "generate", "--family", "nope", "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "unknown professional family 'nope'" in bad.output + str(bad.exception)


def _edited(task: Task, **changes: bytes | None) -> Task:
    files = {p: f for p, f in task.files.items()}
    for path, data in changes.items():
        path = path.replace("__", "/").replace("_DOT_", ".")
        if data is None:
            files.pop(path)
        else:
            files[path] = TaskFile(data=data)
    return Task.create(task.name, task.config.model_dump(exclude_none=True), task.instruction, files)


@pytest.mark.parametrize("family", FAMILIES)
def test_tasks_declare_their_outputs_and_verify_in_isolated_python(family):
    """The verifier sees the image plus only the declared outputs (a folder where the outputs are
    files in one), and profcheck runs with ``python3 -I``: nothing the agent adds elsewhere, no
    module planted where Python looks, reaches the checker."""
    for level in (MIN_LEVEL, MAX_LEVEL):
        task = ProfessionalDomain().generate_level(family, seed=3, level=level)
        spec = json.loads(task.files["tests/spec.json"].text)
        declared = task.config.verifier.outputs
        assert declared and task.config.verifier.effective_view == "outputs"
        for rel in spec["outputs"]:
            assert any(f"/app/{rel}" == d or f"/app/{rel}".startswith(d + "/") for d in declared), (rel, declared)
        assert all(d.startswith("/app/") and d.count("/") == 2 for d in declared), declared
        assert "exec python3 -I /tests/profcheck.py" in task.files["tests/test.sh"].text
    if family == "mail_merge":  # letters/<key>.docx: the whole folder, so letters nobody asked for are seen
        task = ProfessionalDomain().generate("mail_merge", seed=1, difficulty="medium")
        assert task.config.verifier.outputs == ["/app/letters"]


def test_the_lint_gate_finds_inconsistent_or_leaky_tasks():
    task = ProfessionalDomain().generate("format_sheet", seed=1, difficulty="easy")
    assert ProfessionalLintGate.problem(task) == ""
    spec = json.loads(task.files["tests/spec.json"].text)
    cases = {
        "no spec": _edited(task, tests__spec_DOT_json=None),
        "other outputs": _edited(task, tests__spec_DOT_json=json.dumps({**spec, "outputs": {"x.xlsx": "xlsx"}}).encode()),
        "stale original": _edited(task, **{"tests__original__report_DOT_xlsx": b"PK old"}),
        "leaked spec": _edited(task, **{"environment__app__spec_DOT_json": task.files["tests/spec.json"].data}),
        "no wrong control": _edited(task, **{"solution__controls__wrong_DOT_sh": None}),
    }
    problems = {name: ProfessionalLintGate.problem(t) for name, t in cases.items()}
    assert "tests/spec.json is missing" in problems["no spec"]
    assert "same, non-empty outputs" in problems["other outputs"]
    assert "is not a copy of the workspace file" in problems["stale original"]
    assert "copy of a hidden verifier file" in problems["leaked spec"]
    assert "solution/controls/wrong.sh is missing" in problems["no wrong control"]


def test_numbers_dates_and_amounts_are_read_with_tolerance_for_harmless_variation():
    pc = profcheck()
    assert pc.num("$1,234.50") == 1234.5 and pc.num("(12.00)") == -12.0 and pc.num("12.5%") == 0.125
    assert pc.num("n/a") is None and pc.num(True) is None and pc.num(float("nan")) is None
    assert pc.close("1,234.5", 1234.50) and not pc.close("1,234.6", 1234.50)
    assert pc.as_date("2025-03-04") == dt.date(2025, 3, 4) == pc.as_date("March 4, 2025") == pc.as_date(45720)
    assert pc.as_date(dt.datetime(2025, 3, 4, 9, 30)) == dt.date(2025, 3, 4)
    assert pc.mentions_amount("Total spend was $12,345.60 this quarter.", 12345.6)
    assert not pc.mentions_amount("Total spend was $12,345.00 this quarter.", 12345.6)
    assert pc.norm("  Net   Revenue ") == pc.norm("net revenue")


def test_scoring_partial_credit_penalties_and_fatal_outcomes(tmp_path, monkeypatch):
    pc = profcheck()
    report = pc.Report()
    report.req("a", True)
    report.req("b", False)
    report.penalty("inputs left unchanged", 0)
    assert report.fraction() == 0.5  # a penalty that did not happen adds nothing
    assert report.score() == 0.25  # half of the reward is paid only for the whole answer
    assert report.score("fraction") == 0.5  # the old scoring, for the tests that measure it
    report.penalty("values unchanged", 2, total=100)
    assert report.fraction() == pytest.approx(1 / 3) and report.score() == pytest.approx(1 / 6)
    with pytest.raises(pc.Fatal, match="30 of 100 changed"):
        report.penalty("values unchanged", 30, total=100)
    nothing = pc.Report()
    assert nothing.score() == 0.0
    whole = pc.Report()
    whole.req("a", True)
    whole.penalty("inputs left unchanged", 0)
    assert whole.score() == 1.0
    # all but one of many requirements met: the old scoring paid 0.9, now it is below a half
    near = pc.Report()
    for i in range(10):
        near.req(str(i), i > 0)
    assert near.score("fraction") == 0.9 and near.score() == 0.45
    # a file of the right name that is not a workbook is fatal, with the reason
    monkeypatch.setattr(pc, "APP", str(tmp_path))
    (tmp_path / "report.xlsx").write_text("not a workbook")
    with pytest.raises(pc.Fatal, match="not a valid .xlsx workbook"):
        pc.open_xlsx(pc.Report(), "report.xlsx")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(pc.Fatal, match="empty.csv is empty"):
        pc.read_csv(pc.Report(), "empty.csv")
    with pytest.raises(pc.Fatal, match="missing.docx was not written"):
        pc.open_docx(pc.Report(), "missing.docx")


needs_pdftoppm = pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="needs poppler-utils (pdftoppm)")
needs_office = pytest.mark.skipif(shutil.which("soffice") is None,
                                  reason="needs LibreOffice: apt-get install libreoffice-calc-nogui libreoffice-writer-nogui")


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@needs_pdftoppm
def test_render_turns_a_generated_invoice_pdf_into_an_image(tmp_path):
    from autoenvscaling.cli.main import cli
    from autoenvscaling.tasks import write_task

    task = ProfessionalDomain().generate("invoice_extract", seed=2, difficulty="easy")
    folder = write_task(task, tmp_path / task.name)
    pdf = sorted((folder / "environment" / "app").rglob("*.pdf"))[0]
    result = CliRunner().invoke(cli, ["professional", "render", str(pdf), "--out", str(tmp_path / "png")])
    assert result.exit_code == 0, result.output
    images = [tmp_path / "png" / line.rsplit("/", 1)[-1] for line in result.output.split()]
    width, height = _png_size(images[0])
    assert width > 400 and height > 500  # a letter or A4 page at 80 dpi


@needs_office
def test_render_turns_a_workbook_into_an_image(tmp_path):
    from autoenvscaling_professional.preview import to_png

    task = ProfessionalDomain().generate("format_sheet", seed=2, difficulty="easy")
    xlsx = tmp_path / "report.xlsx"
    xlsx.write_bytes(task.files["environment/app/report.xlsx"].data)
    width, _ = _png_size(to_png(xlsx, tmp_path / "png")[0])
    assert width > 400


def test_render_without_the_tools_says_what_to_install(tmp_path, monkeypatch):
    from autoenvscaling.errors import MissingPrerequisite

    from autoenvscaling_professional.preview import to_png

    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    (tmp_path / "memo.docx").write_bytes(b"PK")
    with pytest.raises(MissingPrerequisite) as info:
        to_png(tmp_path / "memo.docx", tmp_path / "png")
    assert "apt-get install libreoffice-calc-nogui" in info.value.hint


def test_a_calendar_with_unreadable_or_repeated_times_is_fatal_with_its_reason(tmp_path, monkeypatch):
    """Broken events like those in icalendar's own test calendars end the scoring with a reason,
    never a crash of the checker."""
    pc = profcheck()
    monkeypatch.setattr(pc, "APP", str(tmp_path))
    event = "BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:Budget review\r\n{times}END:VEVENT\r\n"
    cal = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n{events}END:VCALENDAR\r\n"
    good = event.format(times="DTSTART:20250407T100000\r\nDTEND:20250407T110000\r\n")
    (tmp_path / "ok.ics").write_text(cal.format(events=good))
    [read] = pc.read_ics(pc.Report(), "ok.ics")
    assert read["start"] == dt.datetime(2025, 4, 7, 10) and read["end"] == dt.datetime(2025, 4, 7, 11)
    twice = event.format(times="DTSTART:20250407T100000\r\nDTSTART:20250408T100000\r\nDTEND:20250407T110000\r\n")
    (tmp_path / "twice.ics").write_text(cal.format(events=twice))
    with pytest.raises(pc.Fatal, match=r"twice.ics: an event \(Budget review\) has more than one DTSTART"):
        pc.read_ics(pc.Report(), "twice.ics")
    broken = event.format(times="DTSTART:2025-04-07 at ten\r\nDTEND:20250407T110000\r\n")
    (tmp_path / "broken.ics").write_text(cal.format(events=broken))
    with pytest.raises(pc.Fatal, match=r"broken.ics: .*(unreadable DTSTART|not a valid iCalendar)"):
        pc.read_ics(pc.Report(), "broken.ics")

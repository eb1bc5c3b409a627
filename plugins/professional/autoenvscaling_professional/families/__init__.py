"""The generator families of the professional domain.

``CATALOG`` says what each family is (description, skills, the family a "different" variation moves
to: related documents, a new skill) without importing a generator; ``load(name)`` imports
``families/<name>.py`` on first use. Each module exposes ``build(rng, level) -> Draft``; its checks
live in ``verifier/checks/<name>.py`` and its reference solution in ``solutions/<name>.py`` (see
``base.py``).
"""

from __future__ import annotations

from types import ModuleType

from autoenvscaling.api import FamilyInfo, family_module

CATALOG: dict[str, FamilyInfo] = {info.name: info for info in [
    FamilyInfo("budget_reconcile", "reconcile a budget workbook against bank statement CSVs: actuals, variances, unmatched items",
               ("openpyxl", "CSV", "matching transactions", "variance"), "summary_formulas"),
    FamilyInfo("summary_formulas", "add a summary sheet of live formulas (SUMIF, COUNTIF, AVERAGE) over a sales workbook",
               ("openpyxl", "spreadsheet formulas", "cross-sheet references"), "format_sheet"),
    FamilyInfo("format_sheet", "apply a house style to a report workbook: number formats, bold headers, frozen panes, widths",
               ("openpyxl", "number formats", "cell styles"), "contacts_clean"),
    FamilyInfo("invoice_extract", "read invoice PDFs and record their fields in a spreadsheet",
               ("pypdf", "text extraction", "openpyxl"), "budget_reconcile"),
    FamilyInfo("memo_docx", "write a memo in Word with required headings, a figures table and numbers from the data",
               ("python-docx", "CSV/JSON", "report writing"), "mail_merge"),
    FamilyInfo("mail_merge", "mail-merge one letter per recipient from a CSV into Word documents",
               ("python-docx", "CSV", "templating"), "memo_docx"),
    FamilyInfo("schedule_ics", "schedule meetings into an iCalendar file around busy times and working hours",
               ("icalendar", "time arithmetic", "constraints"), "invoice_extract"),
    FamilyInfo("contacts_clean", "clean, normalise and deduplicate a contact list",
               ("CSV", "normalisation", "deduplication"), "schedule_ics"),
]}


def load(name: str) -> ModuleType:
    """The generator module of family ``name`` (imported on first use)."""
    return family_module(__name__, CATALOG, name)

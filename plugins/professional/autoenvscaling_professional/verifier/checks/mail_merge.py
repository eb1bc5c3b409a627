"""Checks for mail_merge, per expected letter: every template paragraph is there with the recipient's
fields merged and no placeholder left; then, only for such a letter, the amount and date are written
as asked. Each row the filter excludes must get no letter (one requirement each, met only alongside
a right letter); lines the template does not have are counted as a penalty. With one combined
letters.docx, the letters are its pages (split at page breaks)."""

import os
import re

import profcheck as pc

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
LEFTOVER = re.compile(r"\{\{|\}\}|«|»")
FORMATTED = ("money", "date")


def _flat(text) -> str:
    return " ".join(str(text).split()).casefold()


def _pages(doc) -> list[list[str]]:
    """The document's lines (paragraphs, split at line breaks), grouped into pages at page breaks
    (a page-break run, "page break before", a section break)."""
    pages: list[list[str]] = [[]]
    lines = [""]

    def new_line():
        pages[-1].append(lines[0])
        lines[0] = ""

    for p in doc.element.body.iter(W + "p"):
        ppr = p.find(W + "pPr")
        before = ppr is not None and ppr.find(W + "pageBreakBefore") is not None and \
            ppr.find(W + "pageBreakBefore").get(W + "val", "true") not in ("0", "false")
        if before:
            pages.append([])
        for node in p.iter(W + "t", W + "tab", W + "br", W + "cr"):
            if node.tag == W + "t":
                lines[0] += node.text or ""
            elif node.tag == W + "tab":
                lines[0] += " "
            elif node.tag == W + "br" and node.get(W + "type") == "page":
                new_line()
                pages.append([])
            else:
                new_line()
        new_line()
        if ppr is not None and ppr.find(W + "sectPr") is not None:
            pages.append([])
    return [[_flat(x) for x in page if x.strip()] for page in pages]


def _pattern(segments, values, strict) -> re.Pattern:
    """A template paragraph as a regex over a flattened line: text and identity fields exact, the
    amount and date exact only when ``strict``."""
    out = []
    for kind, value in segments:
        if kind == "field" and (strict or value not in FORMATTED):
            out.append(re.escape(_flat(values[value])))
        elif kind == "field":
            out.append(r".+?")
        else:
            core = re.escape(_flat(value)).replace(r"\ ", r"\s+")
            out.append((r"\s*" if value[:1].isspace() else "") + core + (r"\s*" if value[-1:].isspace() else ""))
    return re.compile("".join(out))


def _score(lines, template, values):
    """(template paragraphs missing, strict paragraphs wrong, lines the template does not have, leftovers)."""
    def show(segments):
        return "".join(v if k == "text" else "{" + v + "}" for k, v in segments)

    loose = [_pattern(s, values, False) for s in template]
    strict = {show(s): _pattern(s, values, True) for s in template if any(k == "field" and v in FORMATTED for k, v in s)}
    missing = [show(s) for s, p in zip(template, loose) if not any(p.fullmatch(x) for x in lines)]
    wrong = [t for t, p in strict.items() if not any(p.fullmatch(x) for x in lines)]
    extra = [x for x in lines if not any(p.fullmatch(x) for p in loose)]
    left = [x for x in lines if LEFTOVER.search(x)]
    return missing, wrong, extra, left


def _letters(spec, report):
    """({key: lines or None}, keys of excluded rows that got a letter, stray documents, keys in order)."""
    keys = [e["key"] for e in spec["letters"]]
    out_keys = [e["key"] for e in spec["excluded"]]
    if spec["combined"]:
        doc = pc.open_docx(report, "letters.docx")
        pages = [p for p in _pages(doc) if p]
        if not pages:
            report.fatal("letters.docx is empty")
        found, stray, order = {}, 0, []
        for page in pages:
            text = "\n".join(page)
            hits = [k for k in keys + out_keys if re.search(r"(?<![\w-])" + re.escape(k.casefold()) + r"(?![\w-])", text)]
            stray += not hits
            if len(hits) == 1:
                found.setdefault(hits[0], page)
                order.append(hits[0])
        return {k: found.get(k) for k in keys}, [k for k in out_keys if k in order], stray, [k for k in order if k in keys]
    found = {}
    for key in keys:
        rel = f"letters/{key}.docx"
        found[key] = [x for page in _pages(pc.open_docx(report, rel)) for x in page] if pc.find_output(rel) else None
    if not any(v is not None for v in found.values()):
        report.fatal("no letter was written in letters/")
    folder = pc.path("letters")
    names = {n.strip().casefold() for n in os.listdir(folder) if not n.startswith((".", "~"))} if os.path.isdir(folder) else set()
    sent = [k for k in out_keys if f"{k.casefold()}.docx" in names]
    stray = len(names - {f"{k.casefold()}.docx" for k in keys + out_keys})
    return found, sent, stray, keys


def check(spec, report):
    found, sent, stray, order = _letters(spec, report)
    formatted = [f for f in FORMATTED if any(k == "field" and v == f for s in spec["template"] for k, v in s)]
    any_ok, extra_lines = False, 0
    for letter in spec["letters"]:
        key, values = letter["key"], letter["values"]
        lines = found[letter["key"]]
        label = f"letter {key} ({letter['name']})"
        if lines is None:
            report.req(f"{label}: merged into the template", False, "no letter for this recipient" +
                       (" on a page of its own" if spec["combined"] else ""))
            report.req(f"{label}: {' and '.join(values[f] for f in formatted)} as asked", False, "no letter")
            continue
        missing, wrong, extra, left = _score(lines, spec["template"], values)
        merged = not missing and not left
        any_ok |= merged
        extra_lines += len(extra)
        report.req(f"{label}: merged into the template", merged, "" if merged else
                   f"{len(missing)} template paragraphs missing or wrong, e.g. {missing[:1]}; placeholders left: {left[:2]}")
        report.req(f"{label}: {' and '.join(values[f] for f in formatted)} as asked",
                   merged and not wrong, f"not found as asked in: {wrong[:1]}" if wrong else "")
    for row in spec["excluded"]:
        report.req(f"no letter for {row['key']} ({row['name']}), whom the filter excludes",
                   any_ok and row["key"] not in sent, "a letter was written" if row["key"] in sent else "")
    if spec["combined"]:
        expected = [e["key"] for e in spec["letters"]]
        report.req("letters in the order of recipients.csv", any_ok and order == expected, f"order {order[:8]}")
    report.penalty("lines the template does not have", extra_lines)
    report.penalty("no stray documents or pages", stray)

"""Text processing with regular expressions, sed and awk.

Kinds:
- ``extract``: the distinct e-mail addresses in a set of documents. Higher levels add several files,
  mixed case, an excluded domain, per-domain counts, and addresses glued to punctuation.
- ``redact``: a copy of support tickets with e-mails, phone numbers and (higher up) card numbers
  replaced by fixed placeholders; everything else byte-identical.
- ``dates``: rewrite dates into ISO 8601 in a new file. Higher levels add a second date style and
  look-alike numbers that must stay unchanged.
"""

from __future__ import annotations

import random
from collections import Counter

from . import vocab
from .base import Draft, Kind, Wording, grow

EMAIL_ERE = "[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+"
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _email(rng: random.Random, domains: list[str]) -> str:
    first, last = rng.choice(vocab.FIRST_NAMES), rng.choice(vocab.SURNAMES)
    local = rng.choice([f"{first}.{last}", f"{first}{rng.randint(1, 99)}", f"{first[0]}{last}", f"{first}_{last}", f"{first}+news"])
    return f"{local}@{rng.choice(domains)}"


def build_extract(rng: random.Random, level: int) -> Draft:
    n_lines = grow(level, 30, 2.2)
    n_files = 1 if level == 0 else 2 + level
    domains = rng.sample(vocab.EMAIL_DOMAINS, 4 + min(level, 4))
    pool = [_email(rng, domains) for _ in range(6 + 4 * level)]
    mixed_case = level >= 2
    excluded = domains[0] if level >= 2 else None
    punct = level >= 4
    docs: list[list[str]] = [[] for _ in range(n_files)]
    found: list[str] = []
    for _ in range(n_lines):
        line = rng.choice(vocab.PROSE)
        if rng.random() < 0.6:
            addr = rng.choice(pool)
            shown = addr.upper() if mixed_case and rng.random() < 0.2 else (addr.title() if mixed_case and rng.random() < 0.2 else addr)
            wrap = rng.choice(["({})", "<{}>", "{},", "{}.", "{};"]) if punct else "{}"
            line = rng.choice([f"{line} Contact {wrap.format(shown)} for details.", f"From: {wrap.format(shown)} — {line}",
                               f"{line} cc {wrap.format(shown)}"])
            found.append(addr.lower())
        docs[rng.randrange(n_files)].append(line)
    names = ["inbox.txt"] if n_files == 1 else [f"{rng.choice(vocab.FILE_STEMS)}_{i}.txt" for i in range(n_files)]
    files = {f"docs/{name}": ("\n".join(lines) + "\n").encode() for name, lines in zip(names, docs)}
    kept = sorted({a for a in found if not (excluded and a.endswith("@" + excluded))})
    out = rng.choice(["emails.txt", "contacts.txt", "out/addresses.txt", "report/emails.lst"])
    truth: dict = {"out": out, "emails": kept}
    checks = ["test_email_list"]
    w = Wording(rng)
    where = "`/app/docs/inbox.txt`" if n_files == 1 else f"the {n_files} text files in `/app/docs/`"
    intro = w.intro([f"We need every e-mail address mentioned in {where}.",
                     f"Marketing wants a contact list built from {where}."])
    ask = w.pick(["Write the distinct addresses to `/app/{o}`, one per line, sorted.",
                  "Extract each unique e-mail address into `/app/{o}` (one address per line, in sorted order).",
                  "Save the unique addresses, sorted and one per line, as `/app/{o}`."], o=out)
    details = [w.pick(["An address is `local@domain` where the local part uses letters, digits and `._%+-`, and the domain is dot-separated labels of letters, digits and hyphens.",
                       "Treat as an e-mail anything matching the usual pattern: letters/digits/`._%+-`, an `@`, then domain labels (letters, digits, hyphens) joined by dots."]),
               w.pick(["Sort in byte order (`LC_ALL=C sort`).", "Use plain byte-order sorting."])]
    w.describe_if(details, [
        (mixed_case, ["Addresses are case-insensitive: write them in lower case and list each only once.",
                      "Normalise to lower case before de-duplicating."]),
        (mixed_case, ["Leave out every address at `{d}`.", "Addresses in the domain `{d}` are internal: exclude them."]),
        (punct, ["Addresses may be wrapped in brackets or followed by punctuation; do not include those characters.",
                 "Watch for surrounding `()`, `<>` and trailing `.,;` — they are not part of an address."]),
    ], d=excluded)
    if level >= 3:
        counts = Counter(a.split("@", 1)[1] for a in kept)
        truth["domains_out"] = rng.choice(["domains.csv", "out/domain_counts.csv"])
        truth["domains"] = [[d, str(c)] for d, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        w.require(checks, details, "test_domain_counts", ["Also write `/app/{f}`: CSV with header `domain,addresses` giving how many of the listed addresses belong to each domain, most first, ties alphabetical.",
                                                          "Additionally produce `/app/{f}` (header `domain,addresses`): for each domain, the number of distinct listed addresses; sort by that number descending, then by domain."],
                                                         f=truth["domains_out"])
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = [f"mkdir -p \"$(dirname /app/{out})\"",
           f"grep -hoE '{EMAIL_ERE}' docs/*.txt | tr 'A-Z' 'a-z'" + (f" | grep -v '@{excluded}$'" if excluded else "") + f" | LC_ALL=C sort -u > /app/{out}"]
    if level >= 3:
        sol += [f"mkdir -p \"$(dirname /app/{truth['domains_out']})\"",
                f"{{ echo domain,addresses; cut -d@ -f2 /app/{out} | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 | awk '{{print $2 \",\" $1}}'; }} > /app/{truth['domains_out']}"]
    return Draft(kind="extract", outputs=[out] + ([truth["domains_out"]] if "domains_out" in truth else []), instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"lines": n_lines, "files": n_files, "mixed_case": mixed_case, "excluded": excluded, "punctuation": punct},
                 tags=["regex", "grep", "email"])


def build_redact(rng: random.Random, level: int) -> Draft:
    n = grow(level, 20, 2.2)
    paren_phones = level >= 2
    cards = level >= 3
    decoys = level >= 1
    domains = rng.sample(vocab.EMAIL_DOMAINS, 4)
    src, dst = [], []
    counts: Counter[str] = Counter()
    for i in range(n):
        parts_src = [f"#{rng.randint(10000, 99999)} [{rng.choice(['open', 'closed', 'pending'])}]"]
        parts_dst = list(parts_src)
        for _ in range(rng.randint(1, 3)):
            choice = rng.choice(["email", "phone", "text", "text"] + (["card"] if cards else []) + (["decoy"] if decoys else []))
            if choice == "email":
                shown, masked = f"reply to {_email(rng, domains)}", "reply to [EMAIL]"
            elif choice == "phone":
                a, b, c = rng.randint(200, 999), rng.randint(100, 999), rng.randint(0, 9999)
                ph = f"({a}) {b}-{c:04d}" if paren_phones and rng.random() < 0.5 else f"{a}-{b}-{c:04d}"
                shown, masked = f"call {ph}", "call [PHONE]"
            elif choice == "card":
                groups = [f"{rng.randint(0, 9999):04d}" for _ in range(4)]
                shown, masked = f"card {'-'.join(groups)}", f"card ****-****-****-{groups[3]}"
            elif choice == "decoy":  # look-alikes that must stay: dates, versions, short numbers
                shown = masked = rng.choice([
                    f"on {rng.randint(2019, 2024)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                    f"version {rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                    f"ref {rng.randint(10, 99)}-{rng.randint(100, 999)}", "user@@broken"])
            else:
                shown = masked = rng.choice(vocab.PROSE)
            if masked != shown:  # personal data: counted per kind
                counts[choice] += 1
            parts_src.append(shown)
            parts_dst.append(masked)
        src.append(" ".join(parts_src))
        dst.append(" ".join(parts_dst))
    for key in ("email", "phone"):  # every pattern appears at least once
        if not counts[key]:
            src.append("reply to ops@" + domains[0] if key == "email" else "call 555-010-0199")
            dst.append("reply to [EMAIL]" if key == "email" else "call [PHONE]")
            counts[key] += 1
    inp = rng.choice(["support/tickets.txt", "data/tickets.log", "tickets/export.txt"])
    out = inp.rsplit(".", 1)[0] + "_redacted.txt"
    truth = {"out": out, "expected": "\n".join(dst) + "\n", "counts": dict(counts)}
    checks = ["test_redacted_emails", "test_redacted_phones", "test_redacted_exact"] + (["test_redacted_cards"] if cards else [])
    w = Wording(rng)
    intro = w.intro([f"Before we share `/app/{inp}` with a contractor, personal data has to go.",
                     f"`/app/{inp}` contains customer tickets with personal details that must be masked."])
    ask = w.pick(["Create `/app/{o}`: the same text with the personal data replaced as described below.",
                  "Write a redacted copy to `/app/{o}`, changing nothing but the items listed.",
                  "Produce `/app/{o}` — identical to the original except for the substitutions below."], o=out)
    details = [w.pick(["Replace each e-mail address with `[EMAIL]`.", "Every e-mail address becomes the literal text `[EMAIL]`."]),
               w.pick(["Replace each phone number written as `NNN-NNN-NNNN`{p} with `[PHONE]`.",
                       "Phone numbers (`NNN-NNN-NNNN`{p}) become `[PHONE]`."], p=" or `(NNN) NNN-NNNN`" if paren_phones else "")]
    w.describe_if(details, [
        (cards, ["Card numbers (`NNNN-NNNN-NNNN-NNNN`) keep only their last group: `****-****-****-NNNN`.",
                 "Mask card numbers of the form NNNN-NNNN-NNNN-NNNN as `****-****-****-` followed by the last four digits."]),
        (decoys, ["Dates, version numbers and other numbers are not personal data: leave them alone.",
                  "Do not alter anything else — including dates, versions and reference numbers."]),
    ])
    details.append(w.pick(["Keep the original file unchanged.", "The source file must stay as it is."]))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    script = []
    if cards:
        script.append("s/[0-9]{4}-[0-9]{4}-[0-9]{4}-([0-9]{4})/****-****-****-\\1/g")
    script.append(f"s/{EMAIL_ERE}/[EMAIL]/g")
    if paren_phones:
        script.append("s/\\([0-9]{3}\\) [0-9]{3}-[0-9]{4}/[PHONE]/g")
    script.append("s/[0-9]{3}-[0-9]{3}-[0-9]{4}/[PHONE]/g")
    sol = "sed -E " + " ".join(f"-e '{s}'" for s in script) + f" /app/{inp} > /app/{out}"
    return Draft(kind="redact", outputs=[out], instruction=instruction, files={inp: ("\n".join(src) + "\n").encode()}, truth=truth, checks=checks,
                 solution=sol, parameters={"lines": n, "paren_phones": paren_phones, "cards": cards, "decoys": decoys},
                 tags=["regex", "sed", "privacy"])


def build_dates(rng: random.Random, level: int) -> Draft:
    n = grow(level, 25, 2.2)
    named = level >= 2
    decoys = level >= 1
    src, dst = [], []
    for _ in range(n):
        y, m, d = rng.randint(1998, 2025), rng.randint(1, 12), rng.randint(1, 28)
        iso = f"{y}-{m:02d}-{d:02d}"
        label = rng.choice(["invoice", "shipment", "renewal", "inspection", "payment", "delivery"])
        shown = f"{MONTHS[m - 1]} {d:02d}, {y}" if named and rng.random() < 0.4 else f"{d:02d}/{m:02d}/{y}"
        tail = ""
        if decoys and rng.random() < 0.4:
            tail = rng.choice([f" ratio {rng.randint(1, 9)}/{rng.randint(1, 9)}", f" build {rng.randint(1, 30)}/{rng.randint(1, 12)}",
                               f" room {rng.randint(100, 999)}/{rng.randint(1, 9)}", " (see note 3/4)"])
        src.append(f"{label} {rng.randint(1000, 9999)} due {shown}{tail}")
        dst.append(f"{label} {src[-1].split()[1]} due {iso}{tail}")
    inp = rng.choice(["data/schedule.txt", "records/deadlines.txt", "notes/due_dates.txt"])
    out = inp.rsplit(".", 1)[0] + "_iso.txt"
    truth = {"out": out, "expected_lines": dst}
    w = Wording(rng)
    intro = w.intro([f"`/app/{inp}` lists deadlines with dates written the European way (DD/MM/YYYY).",
                     f"Dates in `/app/{inp}` use the DD/MM/YYYY style, which our importer cannot read."])
    ask = w.pick(["Write `/app/{o}` with every date rewritten as ISO 8601 (`YYYY-MM-DD`).",
                  "Convert all the dates to `YYYY-MM-DD` and save the result as `/app/{o}`.",
                  "Create `/app/{o}`: the same lines, but with ISO dates (YYYY-MM-DD)."], o=out)
    details = [w.pick(["Keep the line order and everything other than the dates unchanged.", "Nothing but the dates may change; lines stay in order."])]
    w.describe_if(details, [
        (named, ["Some dates are written like `Mar 05, 2024` (English month abbreviation, two-digit day, comma, year); convert those as well.",
                 "A second style also occurs — `Mon DD, YYYY`, e.g. `Jan 09, 2021` — and must be converted too."]),
        (decoys, ["Fractions such as `3/4` or `12/5` are not dates.", "Be careful not to touch slash-separated numbers that are not full dates (like `2/3`)."]),
    ])
    details.append("Leave the original file as it is.")
    instruction = w.compose(intro=intro, ask=ask, details=details)
    script = ["s#\\b([0-9]{2})/([0-9]{2})/([0-9]{4})\\b#\\3-\\2-\\1#g"]
    if named:
        script += [f"s/\\b{mon} ([0-9]{{2}}), ([0-9]{{4}})\\b/\\2-{i:02d}-\\1/g" for i, mon in enumerate(MONTHS, 1)]
    sol = "sed -E \\\n" + "".join(f"    -e '{s}' \\\n" for s in script) + f"    /app/{inp} > /app/{out}"
    checks = ["test_dates_converted_lines", "test_shape_no_old_dates"]
    return Draft(kind="dates", outputs=[out], instruction=instruction, files={inp: ("\n".join(src) + "\n").encode()}, truth=truth, checks=checks,
                 solution=sol, parameters={"lines": n, "named_months": named, "decoys": decoys}, tags=["regex", "sed", "dates"])


KINDS = [Kind("extract", build_extract), Kind("redact", build_redact), Kind("dates", build_dates)]

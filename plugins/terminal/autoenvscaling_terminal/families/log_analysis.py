"""Log analysis: summarise web access logs or application logs.

Kinds:
- ``access_report``: a JSON report over combined-format access logs. Higher levels add fields (top
  clients, bytes), rotated and gzip-compressed files, malformed lines to skip and count, and the
  paths with the most server errors.
- ``app_errors``: per-service ERROR counts as CSV over application logs. Higher levels add the set of
  error codes, several log files, multi-line stack traces whose continuation lines mention ERROR
  (a trap for a plain grep), and a time window.
"""

from __future__ import annotations

import gzip
import random
import re
from collections import Counter
from datetime import datetime, timedelta, timezone

from . import vocab
from .base import Draft, Kind, Wording, grow

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
ACCESS_RE = re.compile(r'^[0-9.]+ - \S+ \[[^]]+\] "[A-Z]+ \S+ HTTP/1\.[01]" [0-9]{3} ([0-9]+|-) ')


def _ips(rng: random.Random, n: int) -> list[str]:
    nets = ["10.0", "10.1", "172.16", "192.168", "203.0", "198.51"]
    return sorted({f"{rng.choice(nets)}.{rng.randint(0, 40)}.{rng.randint(1, 254)}" for _ in range(n * 2)})[:n]


def _start(rng: random.Random) -> datetime:
    return datetime(2024, rng.randint(1, 12), rng.randint(1, 27), rng.randint(0, 20), tzinfo=timezone.utc)


def _access_line(rng: random.Random, ip: str, stamp: str, weights: list[float]) -> tuple[str, str, str, int]:
    path = rng.choices(vocab.ENDPOINTS, weights=weights)[0]
    method = rng.choices(["GET", "POST", "PUT", "DELETE"], weights=[8, 3, 1, 1])[0]
    status = rng.choices(["200", "201", "204", "301", "304", "400", "403", "404", "500", "502", "503"],
                         weights=[40, 4, 2, 3, 5, 3, 2, 8, 3, 2, 2])[0]
    size = 0 if status in ("204", "304") else rng.randint(120, 48000)
    size_field = "-" if size == 0 else str(size)
    user = rng.choice(["-", "-", "-", rng.choice(vocab.FIRST_NAMES)])
    line = (f'{ip} - {user} [{stamp}] "{method} {path} HTTP/1.1" {status} {size_field} '
            f'"-" "{rng.choice(vocab.USER_AGENTS)}"')
    return line, path, status, size


def _malformed(rng: random.Random, ip: str, stamp: str) -> str:
    return rng.choice([
        f'{ip} - - [{stamp}] "GET /api/items HTTP/1.1" 200',
        f'{ip} - - [{stamp}] "\\x16\\x03\\x01" 400 -',
        "--- log rotated ---",
        f'{ip} - - [{stamp}] "GET /search HTTP/1.1" OK 512 "-" "curl/8.4.0"',
        f"[{stamp}] upstream timed out",
    ])


# What each field of the access report holds, in two phrasings: "`field`: <first>" or "`field` — <second>".
ACCESS_FIELDS: dict[str, tuple[str, str]] = {
    "total_requests": ("the number of well-formed request lines (an integer)",
                       "how many valid requests were logged, as an integer"),
    "status_counts": ("an object mapping each HTTP status code (as a string, e.g. \"404\") to how many requests got it",
                      "for every status code that occurs, the number of requests with that code; keys are the codes as strings"),
    "top_ips": ("a list of the 3 client IP addresses with the most requests, busiest first; break ties by IP in plain ascending string order",
                "the three busiest client IPs (most requests first, equal counts ordered by the IP string ascending)"),
    "bytes_total": ("the sum of the response size field over all valid requests, where a size of `-` counts as 0",
                    "total bytes served (size column summed; `-` means 0)"),
    "malformed_lines": ("how many lines across the files are not well-formed combined-log entries (skip them everywhere else)",
                        "the count of lines that do not follow the combined log format; ignore those lines for every other field"),
    "error_paths": ("the 3 request paths with the most 5xx responses, most first, ties broken by path ascending",
                    "the three URL paths that produced the most server errors (status 500-599); order by count descending, then path"),
}


def build_access(rng: random.Random, level: int) -> Draft:
    n = grow(level, 120, 2.6)
    rotated = level >= 3
    malformed_count = 0 if level < 3 else max(3, n // 60)
    ips = _ips(rng, 6 + 3 * level)
    ip_weights = [rng.paretovariate(1.2) for _ in ips]
    path_weights = [rng.paretovariate(1.5) for _ in vocab.ENDPOINTS]
    when = _start(rng)
    entries: list[str] = []
    valid: list[tuple[str, str, str, int]] = []
    malformed_slots = set(rng.sample(range(n), malformed_count)) if malformed_count else set()
    for i in range(n):
        when += timedelta(seconds=rng.randint(1, 90))
        ip = rng.choices(ips, weights=ip_weights)[0]
        stamp = f"{when.day:02d}/{MONTHS[when.month - 1]}/{when.year}:{when:%H:%M:%S} +0000"
        if i in malformed_slots:
            entries.append(_malformed(rng, ip, stamp))
            assert not ACCESS_RE.match(entries[-1])
            continue
        line, path, status, size = _access_line(rng, ip, stamp, path_weights)
        assert ACCESS_RE.match(line)
        entries.append(line)
        valid.append((ip, path, status, size))
    files: dict[str, bytes] = {}
    if rotated:  # oldest third gzip-compressed, middle third in .1, newest in the live file
        a, b = n // 3, 2 * n // 3
        files["logs/access.log.2.gz"] = gzip.compress(("\n".join(entries[:a]) + "\n").encode(), mtime=0)
        files["logs/access.log.1"] = ("\n".join(entries[a:b]) + "\n").encode()
        files["logs/access.log"] = ("\n".join(entries[b:]) + "\n").encode()
    else:
        files["logs/access.log"] = ("\n".join(entries) + "\n").encode()

    ip_counts = Counter(v[0] for v in valid)
    truth: dict = {"total_requests": len(valid), "status_counts": dict(sorted(Counter(v[2] for v in valid).items()))}
    fields = ["total_requests", "status_counts"]
    if level >= 2:
        truth["top_ips"] = [ip for ip, _ in sorted(ip_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
        truth["bytes_total"] = sum(v[3] for v in valid)
        fields += ["top_ips", "bytes_total"]
    if level >= 3:
        truth["malformed_lines"] = malformed_count
        fields.append("malformed_lines")
    if level >= 4:
        errors = Counter(v[1] for v in valid if v[2].startswith("5"))
        truth["error_paths"] = [p for p, _ in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
        fields.append("error_paths")
    checks = ["test_shape_report_json"] + [f"test_{f}" for f in fields]  # a check per field of the report

    out = rng.choice(["report.json", "traffic_summary.json", "out/access_report.json", "reports/weblog.json",
                      "summary/http.json"])
    truth["report"] = out
    w = Wording(rng)
    described = {f: w.pick([f"`{f}`: {first}", f"`{f}` — {second}"]) for f, (first, second) in ACCESS_FIELDS.items()}
    where = ("The web server's access logs are in `/app/logs/` (the live `access.log`, the previous `access.log.1` and an older, gzip-compressed `access.log.2.gz`)"
             if rotated else "The web server's access log is `/app/logs/access.log`")
    intro = [w.persona(), where + w.pick([", in the standard combined log format.", ", written in the Apache/nginx combined format."])]
    ask = w.pick(["Write a JSON report to `/app/{out}` that summarises the traffic.",
                  "Please produce a summary of the requests as a JSON object in `/app/{out}`.",
                  "I need the traffic summarised into `/app/{out}` as one JSON object.",
                  "Analyse the log and save the results as JSON at `/app/{out}`."], out=out)
    details = [f"The object must have the key {described[f]}." if i % 2 else f"Include {described[f]}." for i, f in enumerate(fields)]
    notes = [w.pick(["Leave the log files untouched.", "Do not modify or delete the logs.", "The original logs must stay as they are."])]
    if rotated:
        notes.append(w.pick(["Count requests from all three files.", "All three files belong to the same server, so combine them."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, notes=notes)

    src = "zcat -f logs/access.log.2.gz logs/access.log.1 logs/access.log" if rotated else "cat logs/access.log"
    parent = out.rsplit("/", 1)[0] if "/" in out else "."
    sol = [f"{src} > /tmp/all.log",
           "grep -E '^[0-9.]+ - [^ ]+ \\[[^]]+\\] \"[A-Z]+ [^ ]+ HTTP/1\\.[01]\" [0-9]{3} ([0-9]+|-) ' /tmp/all.log > /tmp/valid.log || true",
           "total=$(wc -l < /tmp/valid.log)",
           "status=$(awk '{print $9}' /tmp/valid.log | LC_ALL=C sort | uniq -c | jq -Rn '[inputs | split(\" \") | map(select(. != \"\")) | {(.[1]): (.[0] | tonumber)}] | add')",
           "args=(--argjson total_requests \"$total\" --argjson status_counts \"$status\")",
           "filter='{total_requests: $total_requests, status_counts: $status_counts'"]
    if level >= 2:
        sol += ["top=$(awk '{print $1}' /tmp/valid.log | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 | head -3 | awk '{print $2}' | jq -Rn '[inputs]')",
                "bytes=$(awk '$10 != \"-\" {s += $10} END {printf \"%.0f\", s}' /tmp/valid.log)",
                "args+=(--argjson top_ips \"$top\" --argjson bytes_total \"$bytes\")",
                "filter+=', top_ips: $top_ips, bytes_total: $bytes_total'"]
    if level >= 3:
        sol += ["malformed=$(( $(wc -l < /tmp/all.log) - total ))",
                "args+=(--argjson malformed_lines \"$malformed\")",
                "filter+=', malformed_lines: $malformed_lines'"]
    if level >= 4:
        sol += ["errs=$(awk '$9 ~ /^5/ {print $7}' /tmp/valid.log | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 | head -3 | awk '{print $2}' | jq -Rn '[inputs]')",
                "args+=(--argjson error_paths \"$errs\")",
                "filter+=', error_paths: $error_paths'"]
    sol += [f"mkdir -p {parent}", f"jq -n \"${{args[@]}}\" \"$filter}}\" > {out}"]
    return Draft(kind="access_report", outputs=[out], instruction=instruction, files=files, truth=truth, checks=checks,
                 solution="\n".join(sol), parameters={"lines": n, "rotated": rotated, "malformed": malformed_count,
                                                      "fields": fields}, tags=["logs", "json"])


def build_app_errors(rng: random.Random, level: int) -> Draft:
    n = grow(level, 100, 2.5)
    services = rng.sample(vocab.SERVICES, min(len(vocab.SERVICES), 3 + level))
    n_files = 1 if level < 3 else level - 1
    traces = level >= 3
    window = level >= 4
    codes = [f"E{rng.randint(1000, 9999)}" for _ in range(4 + level)]
    when = _start(rng)
    per_file: list[list[str]] = [[] for _ in range(n_files)]
    records: list[tuple[str, str, str | None]] = []  # (timestamp, service, code) of ERROR entries
    for i in range(n):
        when += timedelta(seconds=rng.randint(1, 300))
        stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        service = rng.choice(services)
        lvl = rng.choices(["DEBUG", "INFO", "WARN", "ERROR"], weights=[3, 10, 3, 3])[0]
        target = per_file[rng.randrange(n_files)]
        if lvl == "ERROR":
            code = rng.choice(codes)
            target.append(f"{stamp} [ERROR] {service}: {code} {rng.choice(['request failed', 'timeout talking to db', 'invalid payload', 'upstream refused connection', 'quota exceeded'])}")
            records.append((stamp, service, code))
            if traces and rng.random() < 0.4:
                target.append(f"    at {service}.handler (ERROR raised in {rng.choice(vocab.WORDS)}.py line {rng.randint(10, 400)})")
                target.append(f"    at {service}.main ({rng.choice(vocab.WORDS)}.py)")
        else:
            target.append(f"{stamp} [{lvl}] {service}: {rng.choice(['ok', 'cache miss', 'slow query', 'retrying', 'user logged in', 'job finished', 'config reloaded'])}")
    names = ["app.log"] if n_files == 1 else [f"app-{i + 1}.log" for i in range(n_files)]
    files = {f"logs/{name}": ("\n".join(lines) + "\n").encode() for name, lines in zip(names, per_file)}
    lo = hi = None
    if window:
        stamps = sorted(r[0] for r in records)
        lo, hi = stamps[len(stamps) // 4], stamps[3 * len(stamps) // 4]
        records = [r for r in records if lo <= r[0] < hi]
    counts = Counter(r[1] for r in records)
    rows = [[s, str(c)] for s, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    out = rng.choice(["errors_by_service.csv", "error_summary.csv", "out/errors.csv", "reports/service_errors.csv"])
    truth: dict = {"csv": out, "rows": rows}
    checks = ["test_shape_errors_csv_header", "test_errors_csv_rows"]
    w = Wording(rng)
    where = ("The application writes logs to `/app/logs/app.log`" if n_files == 1 else
             f"The application's logs are split over {n_files} files, `/app/logs/app-1.log` to `/app/logs/app-{n_files}.log`")
    intro = [w.persona(), where + ". Each entry starts with an ISO-8601 UTC timestamp, a level in brackets and the service name followed by a colon."]
    ask = w.pick(["Count the ERROR entries per service and write the result to `/app/{out}`.",
                  "Find out how many errors each service logged; save the counts as CSV at `/app/{out}`.",
                  "Produce `/app/{out}`, a CSV with the number of ERROR-level entries of every service."], out=out)
    details = [w.pick(["The CSV has the header `service,errors` and one row per service with at least one error.",
                       "Use the header line `service,errors`; list only services that logged an error."]),
               w.pick(["Sort rows by the error count, highest first; services with equal counts in alphabetical order.",
                       "Order: most errors first, ties broken alphabetically by service name."])]
    sol_filter = "grep -hE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z \\[ERROR\\] ' logs/*.log"
    if window:
        details.append(w.pick(["Only count entries with a timestamp from {lo} (inclusive) up to {hi} (exclusive).",
                               "Consider only the window [{lo}, {hi}) — earlier and later entries do not count."], lo=lo, hi=hi))
        sol_filter += f" | awk '$1 >= \"{lo}\" && $1 < \"{hi}\"'"
    if traces:
        details.append(w.pick(["Some errors are followed by indented stack-trace lines; those lines are not separate entries.",
                               "Indented continuation lines (stack traces) belong to the entry above them and must not be counted."]))
    if level >= 2:
        codes_out = rng.choice(["error_codes.txt", "codes.txt", "out/error_codes.txt"])
        truth["codes_file"] = codes_out
        truth["codes"] = sorted({r[2] for r in records})
        w.require(checks, details, "test_error_codes", ["Every ERROR entry carries an error code (E followed by four digits) right after the service name: also write the distinct codes{scope}, sorted, one per line, to `/app/{f}`.",
                                                        "Also list each distinct error code{scope} (the `E####` token after the service) once per line, in sorted order, in `/app/{f}`."],
                                                       f=codes_out, scope=" of the counted entries" if window else "")
    notes = [w.pick(["Do not change the log files.", "Leave the logs as they are.", ""])]
    instruction = w.compose(intro=intro, ask=ask, details=details, notes=notes)
    sol = [f"{sol_filter} > /tmp/errors.log || true",
           f"mkdir -p {out.rsplit('/', 1)[0] if '/' in out else '.'}",
           "{ echo service,errors; awk '{sub(/:$/, \"\", $3); print $3}' /tmp/errors.log | LC_ALL=C sort | uniq -c"
           f" | LC_ALL=C sort -k1,1nr -k2,2 | awk '{{print $2 \",\" $1}}'; }} > {out}"]
    if level >= 2:
        sol += [f"mkdir -p {truth['codes_file'].rsplit('/', 1)[0] if '/' in truth['codes_file'] else '.'}",
                f"awk '{{print $4}}' /tmp/errors.log | LC_ALL=C sort -u > {truth['codes_file']}"]
    return Draft(kind="app_errors", outputs=[out] + ([truth["codes_file"]] if "codes_file" in truth else []), instruction=instruction, files=files, truth=truth, checks=checks,
                 solution="\n".join(sol), parameters={"lines": n, "files": n_files, "traces": traces, "window": window},
                 tags=["logs", "csv"])


KINDS = [Kind("access_report", build_access), Kind("app_errors", build_app_errors)]

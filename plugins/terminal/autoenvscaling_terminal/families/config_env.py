"""Configuration and environment files.

Kinds:
- ``ini_edit``: apply a change request to an INI file in place, keeping comments and everything not
  mentioned (more edits, removed keys, new sections as the level rises).
- ``env_merge``: merge layered ``.env`` files with precedence into one sorted file (``export``
  prefixes and comments, a local override layer, quoted values, ``${VAR}`` references).
- ``env_validate``: check several ``.env`` files against a JSON schema and report missing, invalid
  and unknown keys.
"""

from __future__ import annotations

import json
import random
from typing import Any

from . import vocab
from .base import Draft, Kind, Wording, grow

SECTIONS = {
    "server": ["host", "port", "workers", "timeout"],
    "database": ["url", "pool_size", "ssl"],
    "app": ["name", "debug", "log_level", "locale"],
    "mail": ["smtp_host", "smtp_port", "sender"],
    "metrics": ["enabled", "interval", "endpoint"],
}


def _value(rng: random.Random, key: str) -> str:
    if "port" in key:
        return str(rng.choice([25, 587, 5432, 8080, 8443, 9000]))
    if key in ("workers", "pool_size", "timeout", "interval"):
        return str(rng.randint(2, 64))
    if key in ("debug", "ssl", "enabled"):
        return rng.choice(["true", "false"])
    if key == "log_level":
        return rng.choice(["info", "warning", "debug"])
    if key in ("url", "endpoint"):
        return f"https://{rng.choice(vocab.COMPANIES)}.example.test/{rng.choice(vocab.WORDS)}"
    return rng.choice(vocab.WORDS) + (f".{rng.choice(vocab.EMAIL_DOMAINS)}" if "host" in key or key == "sender" else "")


def build_ini_edit(rng: random.Random, level: int) -> Draft:
    sections = rng.sample(sorted(SECTIONS), 3 + min(level, 2))
    config: dict[str, dict[str, str]] = {s: {k: _value(rng, k) for k in SECTIONS[s]} for s in sections}
    comments = {s: f"# {rng.choice(vocab.PROSE)}" for s in sections}
    lines = [f"; {rng.choice(vocab.COMPANIES)} service configuration", ""]
    for s in sections:
        lines += [comments[s], f"[{s}]"] + [f"{k} = {v}" for k, v in config[s].items()] + [""]
    original = "\n".join(lines)
    edits: list[str] = []
    want = {s: dict(kv) for s, kv in config.items()}
    s0 = "server" if "server" in want else sections[0]
    k0 = rng.choice(list(want[s0]))
    v0 = _value(rng, k0)
    while v0 == want[s0][k0]:
        v0 = v0 + "0" if v0.isdigit() else f"{v0}-new"
    want[s0][k0] = v0
    edits.append(f"In `[{s0}]`, set `{k0}` to `{v0}`.")
    n_edits = grow(level, 1, 1.7)
    candidates = [(s, k) for s in sections for k in config[s] if (s, k) != (s0, k0)]
    rng.shuffle(candidates)
    for s, k in candidates[: n_edits - 1]:
        v = _value(rng, k)
        if v == want[s][k]:
            v = f"{v}-2" if not v.isdigit() else str(int(v) + 1)
        want[s][k] = v
        edits.append(f"In `[{s}]`, change `{k}` to `{v}`.")
    if level >= 1:
        s1 = rng.choice(sections)
        new_key = rng.choice(["retries", "max_body_kb", "region", "owner"])
        new_val = str(rng.randint(1, 9)) if new_key in ("retries",) else _value(rng, new_key)
        want[s1][new_key] = new_val
        edits.append(f"Add `{new_key} = {new_val}` to `[{s1}]`.")
    if level >= 2:
        s2, k2 = rng.choice([c for c in candidates if c[1] != k0])
        if k2 in want[s2]:
            del want[s2][k2]
            edits.append(f"Remove the `{k2}` setting from `[{s2}]`.")
        new_section = rng.choice(["cache", "features", "limits"])
        if new_section not in want:
            want[new_section] = {"backend": rng.choice(["redis", "memory"]), "ttl": str(rng.randint(30, 900))}
            edits.append(f"Add a new section `[{new_section}]` with `backend = {want[new_section]['backend']}` and `ttl = {want[new_section]['ttl']}`.")
    path = rng.choice(["config/app.ini", "etc/service.ini", "settings.ini"])
    truth = {"path": path, "want": want, "comments": [l for l in lines if l.startswith(("#", ";"))]}
    w = Wording(rng)
    intro = w.intro([f"The service reads its settings from `/app/{path}`.", f"`/app/{path}` is our service's INI configuration."])
    ask = w.pick(["Edit the file in place to apply this change request:", "Please update that file with the following changes:",
                  "Apply these configuration changes directly to the file:"])
    details = edits
    notes = [w.pick(["Keep every comment and every setting not mentioned exactly as it is.", "Comments and untouched settings must survive unchanged."]),
             w.pick(["Use the `key = value` style of the file.", ""])]
    instruction = w.compose(intro=intro, ask=ask, details=details, notes=notes, shuffle_details=False)
    sol = ["python3 - <<'EOF'", "import re", f"path = '/app/{path}'", "text = open(path).read()", f"want = {json.dumps(want)}",
           "out, section, seen = [], None, set()",
           "def flush(sec):",
           "    for key, value in want.get(sec, {}).items():",
           "        if (sec, key) not in seen:",
           "            out.append(f'{key} = {value}')",
           "for line in text.splitlines():",
           "    m = re.match(r'\\[(.+)\\]$', line.strip())",
           "    if m:",
           "        if section is not None:",
           "            while out and not out[-1].strip():",
           "                out.pop()",
           "            flush(section)",
           "            out.append('')",
           "        section = m.group(1)",
           "        out.append(line)",
           "        continue",
           "    kv = re.match(r'\\s*([^#;=\\s][^=]*?)\\s*=', line)",
           "    if kv and section is not None:",
           "        key = kv.group(1)",
           "        seen.add((section, key))",
           "        if key in want.get(section, {}):",
           "            out.append(f'{key} = {want[section][key]}')",
           "        continue",
           "    out.append(line)",
           "if section is not None:",
           "    while out and not out[-1].strip():",
           "        out.pop()",
           "    flush(section)",
           "present = set(re.findall(r'^\\[(.+)\\]$', text, re.M))",
           "for sec in want:",
           "    if sec not in present:",
           "        out += ['', f'[{sec}]'] + [f'{k} = {v}' for k, v in want[sec].items()]",
           "open(path, 'w').write('\\n'.join(out) + '\\n')",
           "EOF"]
    return Draft(kind="ini_edit", outputs=[path], instruction=instruction, files={path: original.encode()}, truth=truth,
                 checks=["test_ini_requested_values", "test_ini_whole_config"], solution="\n".join(sol),
                 parameters={"edits": len(edits), "sections": len(sections)}, guard=[], tags=["ini", "config"])


def _env_line(rng: random.Random, key: str, value: str, level: int) -> str:
    prefix = "export " if level >= 1 and rng.random() < 0.3 else ""
    shown = value
    if level >= 3 and (" " in value or rng.random() < 0.3):
        shown = f'"{value}"' if rng.random() < 0.5 or "$" in value else f"'{value}'"
    elif " " in value:
        shown = f'"{value}"'
    return f"{prefix}{key}={shown}"


def build_env_merge(rng: random.Random, level: int) -> Draft:
    keys = sorted({rng.choice(["APP", "DB", "CACHE", "MAIL", "AUTH", "QUEUE"]) + "_" + rng.choice(["HOST", "PORT", "USER", "NAME", "TIMEOUT", "MODE", "LEVEL", "URL"])
                   for _ in range(grow(level, 6, 1.5))})
    env_name = rng.choice(["production", "staging", "qa"])
    layers = ["base", env_name] + (["local"] if level >= 2 else [])
    merged: dict[str, str] = {}
    files: dict[str, bytes] = {}
    refs = level >= 4
    for li, layer in enumerate(layers):
        chosen = keys if li == 0 else rng.sample(keys, max(1, len(keys) // (li + 1)))
        if li > 0 and rng.random() < 0.5:
            chosen = chosen + [f"{layer.upper()}_ONLY_{rng.randint(1, 9)}"]
        lines = [f"# {layer} settings"] if level >= 1 else []
        for key in chosen:
            raw = rng.choice([str(rng.randint(1, 9000)), rng.choice(vocab.WORDS), f"{rng.choice(vocab.WORDS)} {rng.choice(vocab.WORDS)}" if level >= 3 else rng.choice(vocab.WORDS)])
            if refs and merged and rng.random() < 0.3:
                ref = rng.choice(sorted(merged))
                raw = f"${{{ref}}}/{rng.choice(vocab.WORDS)}"
                value = merged[ref] + raw[len(ref) + 3:]
            else:
                value = raw
            merged[key] = value
            lines.append(_env_line(rng, key, raw, level))
            if level >= 1 and rng.random() < 0.2:
                lines.append("")
        files[f"deploy/{layer}.env"] = ("\n".join(lines) + "\n").encode()
    out = rng.choice(["deploy/final.env", "deploy/merged.env", f"deploy/{env_name}.resolved.env"])
    truth = {"out": out, "merged": dict(sorted(merged.items()))}
    w = Wording(rng)
    order = ", then ".join(f"`/app/deploy/{l}.env`" for l in layers)
    intro = w.intro([f"Our {env_name} deployment is configured by layered env files: {order}.",
                     f"Settings for {env_name} come from {order} — later files override earlier ones."])
    ask = w.pick(["Produce the effective configuration in `/app/{o}`.", "Merge them into a single file `/app/{o}`.",
                  "Write the resolved settings to `/app/{o}`."], o=out)
    details = [w.pick(["A key defined in a later file overrides the same key from an earlier one; keys from all files are kept.",
                       "Later layers win for keys they redefine; every key that appears anywhere ends up in the result."]),
               w.pick(["Output one `KEY=VALUE` line per key, sorted by key (byte order), with no quotes, `export` prefixes, comments or blank lines.",
                       "Format: `KEY=VALUE` lines sorted by key name, plain values (unquoted), nothing else in the file."])]
    w.describe_if(details, [
        (level >= 1, ["The inputs may contain comments, blank lines and `export ` prefixes.", "Expect `export ` in front of some lines, plus comments and empty lines."]),
        (level >= 3, ["Some values are quoted with single or double quotes; the quotes are not part of the value.",
                      "Values may be wrapped in quotes — strip them (the value is what a shell would assign)."]),
        (refs, ["Values can reference other settings as `${{NAME}}`; expand them with the value NAME has at that point when the files are read in order (as `source`-ing them in a shell would).",
                "Expand `${{VAR}}` references the way the shell does when the files are sourced one after another."]),
    ])
    details.append("Do not modify the input files.")
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sources = " ".join(f"/app/deploy/{l}.env" for l in layers)
    sol = [f"keys=$(sed -E -e 's/^export //' -e '/^[[:space:]]*(#|$)/d' -e 's/=.*//' {sources} | LC_ALL=C sort -u)",
           f"env -i bash -c 'set -a; for f in {sources}; do . \"$f\"; done; for k in '\"$(echo $keys)\"'; do printf \"%s=%s\\n\" \"$k\" \"${{!k}}\"; done' > /app/{out}"]
    return Draft(kind="env_merge", outputs=[out], instruction=instruction, files=files, truth=truth, checks=["test_env_keys", "test_env_values", "test_env_format"],
                 solution="\n".join(sol), parameters={"keys": len(merged), "layers": len(layers), "quotes": level >= 3, "references": refs},
                 tags=["dotenv", "config", "shell"])


SCHEMA_TYPES = {"int": ["8080", "3", "-1", "12"], "bool": ["true", "false"], "url": ["https://api.example.test/v1", "http://localhost:9000"],
                "string": ["alpha", "eu-west", "reports"]}
BAD = {"int": ["eighty", "3.5", "12a", ""], "bool": ["yes", "True", "1", ""], "url": ["ftp://x.test", "example.test", ""], "string": [""]}


def _no_empty_field(files: dict[str, bytes], report: dict[str, dict[str, list[str]]], schema: dict, unknown: bool) -> None:
    """Make sure every field of the report names at least one key somewhere: a report of empty lists
    (nothing wrong anywhere) must never be the right answer for a field. Deterministic and without
    the generator's rng, so tasks that needed no repair are unchanged."""
    def env_lines(name: str) -> list[str]:
        return files[f"envs/{name}"].decode().splitlines()

    def put(name: str, lines: list[str]) -> None:
        files[f"envs/{name}"] = ("\n".join(lines) + "\n").encode()

    def keys_of(name: str) -> list[str]:
        return [line.split("=", 1)[0] for line in env_lines(name)]

    names = sorted(report)
    if not any(e["missing"] for e in report.values()):
        if not any(spec["required"] for spec in schema.values()):
            first = sorted(schema)[0]
            schema[first]["required"] = True
            files["config/schema.json"] = (json.dumps(schema, indent=2, sort_keys=True) + "\n").encode()
        hit = next(((name, i, key) for name in names for i, key in enumerate(keys_of(name))
                    if key in schema and schema[key]["required"]), None)
        if hit is not None:  # the first required key: deleted
            name, i, key = hit
            lines = env_lines(name)
            del lines[i]
            put(name, lines)
            report[name]["missing"] = sorted(report[name]["missing"] + [key])
            report[name]["invalid"] = [k for k in report[name]["invalid"] if k != key]
        for name in names:  # a key made required may be absent elsewhere already
            present = set(keys_of(name))
            report[name]["missing"] = sorted(k for k, spec in schema.items() if spec["required"] and k not in present)
    if not any(e["invalid"] for e in report.values()):
        hit = next(((name, i, key) for name in names for i, key in enumerate(keys_of(name)) if key in schema), None)
        if hit is not None:  # the first key the schema knows: given a bad value
            name, i, key = hit
            lines = env_lines(name)
            lines[i] = f"{key}={BAD[schema[key]['type']][0]}"
            put(name, lines)
            report[name]["invalid"] = sorted(report[name]["invalid"] + [key])
    if unknown and not any(e["unknown"] for e in report.values()):
        put(names[0], env_lines(names[0]) + ["LEGACY_MODE=1"])
        report[names[0]]["unknown"] = ["LEGACY_MODE"]


def build_env_validate(rng: random.Random, level: int) -> Draft:
    n_keys = 4 + level
    keys = rng.sample(["PORT", "WORKERS", "DEBUG", "API_URL", "REGION", "CACHE_TTL", "ENABLE_SSO", "CALLBACK_URL", "TEAM", "MAX_CONN"], n_keys)
    types = {k: ("int" if k in ("PORT", "WORKERS", "CACHE_TTL", "MAX_CONN") else "bool" if k in ("DEBUG", "ENABLE_SSO")
                 else "url" if k.endswith("URL") else "string") for k in keys}
    schema: dict[str, dict[str, Any]] = {k: {"type": types[k], "required": rng.random() < 0.7} for k in keys}
    ranges = level >= 3
    if ranges:
        for k in keys:
            if types[k] == "int":
                schema[k]["min"], schema[k]["max"] = 1, rng.choice([100, 1000, 65535])
    unknown_check = level >= 2
    n_files = grow(level, 2, 1.5)
    files: dict[str, bytes] = {"config/schema.json": (json.dumps(schema, indent=2, sort_keys=True) + "\n").encode()}
    report: dict[str, dict[str, list[str]]] = {}
    for i in range(n_files):
        name = f"{rng.choice(['web', 'worker', 'cron', 'api', 'admin'])}-{i + 1}.env"
        lines, missing, invalid, unknown = [], [], [], []
        for k in keys:
            roll = rng.random()
            if roll < 0.15:
                if schema[k]["required"]:
                    missing.append(k)
                continue
            if roll < 0.35:
                value = rng.choice(BAD[types[k]])
                if ranges and types[k] == "int" and rng.random() < 0.5:
                    value = str(schema[k]["max"] + rng.randint(1, 50))
                invalid.append(k)
            else:
                value = rng.choice(SCHEMA_TYPES[types[k]])
                if ranges and types[k] == "int":
                    value = str(rng.randint(schema[k]["min"], schema[k]["max"]))
            lines.append(f"{k}={value}")
        if unknown_check and rng.random() < 0.6:
            extra = rng.choice(["LEGACY_MODE", "OLD_PORT", "TMP_FLAG"])
            lines.append(f"{extra}=1")
            unknown.append(extra)
        rng.shuffle(lines)
        files[f"envs/{name}"] = ("\n".join(lines) + "\n").encode()
        entry = {"missing": sorted(missing), "invalid": sorted(invalid)}
        if unknown_check:
            entry["unknown"] = sorted(unknown)
        report[name] = entry
    _no_empty_field(files, report, schema, unknown_check)
    out = rng.choice(["validation.json", "reports/env_check.json", "env_report.json"])
    truth = {"out": out, "report": report}
    w = Wording(rng)
    intro = w.intro(["Every service's environment file lives in `/app/envs/`, and `/app/config/schema.json` says what they must contain.",
                     "`/app/config/schema.json` describes the allowed settings; the actual env files are in `/app/envs/`."])
    ask = w.pick(["Validate each `.env` file against the schema and write the findings to `/app/{o}`.",
                  "Check all env files in `/app/envs` against the schema; save a JSON report as `/app/{o}`."], o=out)
    keys_desc = "`missing` and `invalid`" + (" and `unknown`" if unknown_check else "")
    details = [w.pick(["The report is a JSON object keyed by file name (e.g. `web-1.env`); each value is an object with the keys {k}, each a sorted list of setting names.",
                       "Report shape: `{{\"<file name>\": {{...}}}}` for every file, where the inner object holds {k} — sorted lists of keys (empty lists when all is well)."], k=keys_desc),
               w.pick(["`missing`: required keys that are absent. `invalid`: keys present whose value does not match the type.",
                       "A required key that does not appear is missing; a key whose value does not fit its type is invalid."]),
               w.pick(["Types: `int` is an optional minus sign followed by digits; `bool` is exactly `true` or `false`; `url` starts with `http://` or `https://` followed by at least one character; `string` is any non-empty value.",
                       "Type rules — int: `-?[0-9]+`; bool: `true`|`false` (lower case); url: `http://` or `https://` plus something; string: not empty."])]
    w.describe_if(details, [
        (ranges, ["Integer settings with `min`/`max` in the schema must lie within that inclusive range, otherwise they are invalid.",
                  "Where the schema gives `min` and `max` for an int, values outside [min, max] count as invalid."]),
        (unknown_check, ["`unknown`: keys in the file that the schema does not define.", "List keys not present in the schema under `unknown`."]),
    ])
    details.append("Each line of an env file is `KEY=VALUE`.")
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = [f"mkdir -p \"$(dirname /app/{out})\"", "python3 - <<'EOF'", "import json, os, re",
           "schema = json.load(open('/app/config/schema.json'))",
           "PATTERNS = {'int': r'-?[0-9]+', 'bool': r'true|false', 'url': r'https?://.+', 'string': r'.+'}",
           "report = {}",
           "for name in sorted(os.listdir('/app/envs')):",
           "    values = dict(l.split('=', 1) for l in open(f'/app/envs/{name}').read().splitlines() if '=' in l)",
           "    missing = sorted(k for k, spec in schema.items() if spec['required'] and k not in values)",
           "    invalid = []",
           "    for k, v in values.items():",
           "        spec = schema.get(k)",
           "        if spec is None:",
           "            continue",
           "        ok = re.fullmatch(PATTERNS[spec['type']], v) is not None",
           "        if ok and spec['type'] == 'int' and 'min' in spec:",
           "            ok = spec['min'] <= int(v) <= spec['max']",
           "        if not ok:",
           "            invalid.append(k)",
           "    entry = {'missing': missing, 'invalid': sorted(invalid)}"]
    if unknown_check:
        sol.append("    entry['unknown'] = sorted(k for k in values if k not in schema)")
    sol += ["    report[name] = entry", f"json.dump(report, open('/app/{out}', 'w'), indent=2)", "EOF"]
    return Draft(kind="env_validate", outputs=[out], instruction=instruction, files=files, truth=truth,
                 checks=["test_shape_validation_files", "test_validation_missing", "test_validation_invalid"] + (["test_validation_unknown"] if unknown_check else []),
                 solution="\n".join(sol), parameters={"files": n_files, "keys": n_keys, "ranges": ranges, "unknown": unknown_check},
                 tags=["dotenv", "json", "validation"])


KINDS = [Kind("ini_edit", build_ini_edit), Kind("env_merge", build_env_merge), Kind("env_validate", build_env_validate)]

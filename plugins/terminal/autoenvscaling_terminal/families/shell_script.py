"""Shell scripting: write a reusable bash script that the checks run on inputs the agent never sees.

Kinds:
- ``rename``: normalise file names in a directory (lower case; spaces to underscores; a dry-run flag;
  a usage error; refusing to overwrite on collisions).
- ``stats``: summary statistics of integers (count, sum, min, max, mean; comments and blank lines;
  a column option for CSV; stdin; an error for non-numeric input).
- ``backup``: a dated tar.gz of a directory (the path printed; rotation keeping the newest K;
  exclusions and a usage error; a checksum file).
"""

from __future__ import annotations

import random
import string

from . import vocab
from .base import Draft, Kind, Wording

SCRIPT_DIRS = ["bin", "scripts", "tools"]


def _script_path(rng: random.Random, names: list[str]) -> str:
    return f"{rng.choice(SCRIPT_DIRS)}/{rng.choice(names)}"


def _messy_name(rng: random.Random, spaces: bool) -> str:
    stem = rng.choice(vocab.FILE_STEMS + vocab.WORDS)
    stem = "".join(c.upper() if rng.random() < 0.4 else c for c in stem)
    if spaces and rng.random() < 0.6:
        stem += " " + rng.choice(vocab.WORDS).title()
    return stem + rng.choice([".TXT", ".txt", ".Md", ".csv", ".LOG", ""])


def _normalise(name: str, spaces: bool) -> str:
    new = name.lower()
    return new.replace(" ", "_") if spaces else new


def _rename_case(rng: random.Random, level: int, size: int) -> dict:
    spaces = level >= 1
    names: list[str] = []
    while len(names) < size:
        n = _messy_name(rng, spaces)
        if n not in names:
            names.append(n)
    if all(_normalise(n, spaces) == n for n in names):  # at least one name must need work
        names[0] = names[0].upper()
    if level >= 4:  # a collision: the normalised name of one file already exists
        victim = next((n for n in names if _normalise(n, spaces) != n), names[0])
        target = _normalise(victim, spaces)
        if target != victim and target not in names:
            names.append(target)
    names.sort(key=lambda s: s.encode())
    current = set(names)
    skipped: list[str] = []
    for n in names:
        new = _normalise(n, spaces)
        if new != n and new in current:
            skipped.append(n)
        elif new != n:
            current.discard(n)
            current.add(new)
    return {"names": names, "after": sorted(current, key=lambda s: s.encode()), "skipped": skipped,
            "plan": [[n, _normalise(n, spaces)] for n in names if _normalise(n, spaces) != n]}


def build_rename(rng: random.Random, level: int) -> Draft:
    script = _script_path(rng, ["normalize_names.sh", "tidy_names.sh", "fixnames.sh", "rename_files.sh"])
    spaces, dry, usage, collide = level >= 1, level >= 2, level >= 3, level >= 4
    cases = [_rename_case(rng, level if i == 0 else min(level, 3), 4 + level + i) for i in range(2)]
    truth: dict = {"script": script, "cases": cases}
    checks = ["test_shape_script_executable", "test_rename_results"]
    w = Wording(rng)
    intro = w.intro(["Files arrive from many sources with inconsistent names.",
                     "Our upload folders are full of files with messy names."])
    ask = w.pick(["Write a bash script `/app/{s}` that takes a directory as its only argument and renames the files in it.",
                  "Create the script `/app/{s}`: given a directory path, it normalises the names of the files directly inside it.",
                  "I need an executable bash script at `/app/{s}` that tidies up file names in the directory passed as its argument."], s=script)
    rules = "convert the name to lower case" + (", then replace every space with an underscore" if spaces else "")
    first = [w.pick(["For each regular file directly in the directory (not in sub-directories): {r}.",
                     "Rule for every file at the top level of the directory: {r}."], r=rules)]
    details = [w.pick(["Files whose name is already normalised stay untouched; file contents never change.",
                       "Do not modify contents, and leave already-normal names alone."]),
               w.pick(["Make it executable with a proper shebang.", "It must be executable (chmod +x) and start with a bash shebang."])]
    w.require_if(checks, details, [
        (dry, "test_rename_dry_run", ["With `-n` before the directory (`{s} -n DIR`), rename nothing and instead print one line `OLD -> NEW` per file that would be renamed, in byte order of the old names.",
                                      "Support a dry-run flag: `{s} -n DIR` prints `OLD -> NEW` (one line per pending rename, sorted by old name, byte order) and changes nothing."]),
        (usage, "test_rename_usage_error", ["If the argument is missing or not a directory, print a usage message to stderr and exit with status 2.",
                                            "Called without a directory (or with a path that is not one), it writes usage help to stderr and exits 2."]),
        (collide, "test_rename_collisions", ["Never overwrite: if the new name already exists, leave the file as it is, print `skip: OLD` to stderr and, at the end, exit with status 1 (0 when nothing was skipped). Process files in byte order of their names.",
                                             "When the target name is taken, do not rename; report `skip: OLD` on stderr and make the script exit 1 after finishing the others (exit 0 if there were no skips). Handle files in byte-sorted order."]),
    ], s=script.rsplit('/', 1)[1])
    samples = {f"samples/{n}": f"sample {i}\n".encode() for i, n in enumerate(cases[1]["names"][:4])}
    details.append(w.pick(["A few example files are in `/app/samples/` if you want to try it (it is fine to rename them).",
                           "You can experiment on `/app/samples/`."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, first=first)
    transform = "new=$(printf '%s' \"$name\" | tr 'A-Z' 'a-z'" + (" | tr ' ' '_'" if spaces else "") + ")"
    body = ["#!/bin/bash", "dry=0"]
    if dry:
        body += ["if [ \"${1:-}\" = \"-n\" ]; then dry=1; shift; fi"]
    body += ["dir=\"${1:-}\""]
    if usage:
        body += ["if [ -z \"$dir\" ] || [ ! -d \"$dir\" ]; then", "    echo \"usage: $(basename \"$0\") [-n] DIR\" >&2", "    exit 2", "fi"]
    body += ["status=0", "while IFS= read -r name; do", f"    {transform}", "    [ \"$new\" = \"$name\" ] && continue",
             "    if [ \"$dry\" = 1 ]; then echo \"$name -> $new\"; continue; fi"]
    if collide:
        body += ["    if [ -e \"$dir/$new\" ]; then echo \"skip: $name\" >&2; status=1; continue; fi"]
    body += ["    mv -- \"$dir/$name\" \"$dir/$new\"",
             "done < <(find \"$dir\" -mindepth 1 -maxdepth 1 -type f -printf '%f\\n' | LC_ALL=C sort)",
             "exit $status"]
    sol = [f"mkdir -p /app/{script.rsplit('/', 1)[0]}", f"cat > /app/{script} <<'EOF'", *body, "EOF", f"chmod +x /app/{script}"]
    return Draft(kind="rename", outputs=[script], instruction=instruction, files=samples, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"spaces": spaces, "dry_run": dry, "usage": usage, "collisions": collide,
                             "hidden_files": sum(len(c["names"]) for c in cases)},
                 guard=[], tags=["bash", "scripting", "files"])


def _stats_case(rng: random.Random, level: int, column: bool) -> dict:
    values = [rng.randint(-50, 500) for _ in range(rng.randint(5, 8 + 4 * level))]
    lines = []
    ncols = rng.randint(2, 4) if column else 1
    col = rng.randint(1, ncols) if column else None  # 1-based
    for v in values:
        if level >= 2 and rng.random() < 0.2:
            lines.append(rng.choice(["", "# comment " + rng.choice(vocab.WORDS), "   "]))
        if col is not None:
            cells = [str(rng.randint(0, 99)) for _ in range(ncols)]
            cells[col - 1] = str(v)
            lines.append(",".join(cells))
        else:
            lines.append(str(v))
    return {"input": "\n".join(lines) + "\n", "column": col, "values": values, "expected": _stats_line(values, level)}


def _stats_line(values: list[int], level: int) -> str:
    parts = [f"count={len(values)}", f"sum={sum(values)}"]
    if level >= 1:
        parts += [f"min={min(values)}", f"max={max(values)}"]
    if level >= 2:
        parts.append(f"mean={sum(values) / len(values):.2f}")
    return " ".join(parts)


def build_stats(rng: random.Random, level: int) -> Draft:
    script = _script_path(rng, ["numstats.sh", "colstats.sh", "summarize.sh", "stats.sh"])
    column, stdin = level >= 3, level >= 4
    cases = [_stats_case(rng, level, column and i > 0) for i in range(3)]
    keys = "count sum" + (" min max" if level >= 1 else "") + (" mean" if level >= 2 else "")
    truth: dict = {"script": script, "cases": cases}
    checks = ["test_shape_script_executable", "test_stats_output"]
    w = Wording(rng)
    intro = w.intro(["We keep computing the same summary numbers by hand.",
                     "Several reports need quick statistics over files of numbers."])
    ask = w.pick(["Write an executable bash script `/app/{s}` that reads a file of integers (one per line) given as its argument and prints summary statistics.",
                  "Create `/app/{s}`: `{b} FILE` prints statistics about the integers in FILE, one number per line.",
                  "Please add a script at `/app/{s}` that summarises a file of whole numbers passed as the first argument."], s=script, b=script.rsplit('/', 1)[1])
    fields = ", ".join(f"`{k}`" for k in keys.split())
    first = [w.pick(["It prints exactly one line of `key=value` pairs separated by single spaces, in this order: {f}.",
                     "Output: a single line with {f} as `key=value` items, space-separated, in that order."], f=fields)]
    details = [w.pick(["Example: `count=3 sum=6{x}`.", "For the numbers 1, 2, 3 it prints `count=3 sum=6{x}`."],
                      x=(" min=1 max=3" if level >= 1 else "") + (" mean=2.00" if level >= 2 else ""))]
    if level >= 2:
        details.append(w.pick(["`mean` has exactly two decimals. Blank lines and lines starting with `#` are ignored.",
                               "Print the mean with two digits after the point; skip empty lines and `#` comments."]))
    if column:
        w.require(checks, details, "test_stats_column_option", ["Option `-c N` (given before the file) selects the N-th comma-separated column instead of the whole line; default is column 1.",
                                                                "Support `-c N` before FILE to read numbers from column N of a comma-separated file (column 1 by default)."])
    if stdin:
        checks += ["test_stats_stdin", "test_stats_rejects_garbage"]
        details.append(w.pick(["Without a FILE argument it reads standard input.", "If no file is given, read the numbers from stdin."]))
        details.append(w.pick(["A value that is not an integer makes it print `error: line N: not a number` (N = line number in the input) to stderr and exit with status 2.",
                               "On a non-integer value, write `error: line N: not a number` to stderr (N is the 1-based input line) and exit 2."]))
    details.append(w.pick(["Make it executable.", "Remember the executable bit."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, first=first)
    awk_fields = ['"count=" n', '"sum=" s']
    if level >= 1:
        awk_fields += ['"min=" mn', '"max=" mx']
    if level >= 2:
        awk_fields.append('sprintf("mean=%.2f", s / n)')
    skip = "/^[[:space:]]*$/ || /^#/ { next }" if level >= 2 else "/^[[:space:]]*$/ { next }"
    body = ["#!/bin/bash", "col=1"]
    if column:
        body += ["if [ \"${1:-}\" = \"-c\" ]; then col=\"$2\"; shift 2; fi"]
    body += ["file=\"${1:--}\"" if stdin else "file=\"$1\"",
             "awk -F, -v col=\"$col\" '",
             f"{skip}",
             "{ v = $col",
             "  if (v !~ /^-?[0-9]+$/) { printf \"error: line %d: not a number\\n\", NR > \"/dev/stderr\"; bad = 1; exit 2 }",
             "  v += 0; n++; s += v",
             "  if (n == 1 || v < mn) mn = v",
             "  if (n == 1 || v > mx) mx = v }",
             "END { if (bad) exit 2; print " + ' " " '.join(awk_fields) + " }",
             "' \"$file\""]
    sol = [f"mkdir -p /app/{script.rsplit('/', 1)[0]}", f"cat > /app/{script} <<'EOF'", *body, "EOF", f"chmod +x /app/{script}"]
    # The sample the agent sees is none of the checked cases (drawn last, so the rest of the task is
    # what it was): a script that only prints the sample's answer scores nothing.
    sample = _stats_case(rng, level, False)
    while sample["expected"] in {c["expected"] for c in cases}:
        sample = _stats_case(rng, level, False)
    truth["sample"] = {"input": sample["input"], "expected": sample["expected"]}
    return Draft(kind="stats", outputs=[script], instruction=instruction, files={"samples/numbers.txt": sample["input"].encode()}, truth=truth,
                 checks=checks, solution="\n".join(sol),
                 parameters={"fields": keys.split(), "column": column, "stdin": stdin, "hidden_cases": len(cases)},
                 tags=["bash", "awk", "scripting"])


def build_backup(rng: random.Random, level: int) -> Draft:
    script = _script_path(rng, ["backup.sh", "snapshot.sh", "archive_dir.sh"])
    prints, rotate, exclude, sums = level >= 1, level >= 2, level >= 3, level >= 4
    keep = rng.randint(2, 3)
    labels = sorted({f"2024{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" for _ in range(keep + 2)})
    tree = {f"{rng.choice(['', 'sub/', 'deep/er/'])}{rng.choice(vocab.FILE_STEMS)}_{i}{rng.choice(['.txt', '.cfg', '.log'])}":
            "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(5, 40))) + "\n" for i in range(4 + level)}
    src_name = rng.choice(["site", "configs", "projects", "home_docs"])
    truth: dict = {"script": script, "tree": tree, "src_name": src_name, "labels": labels, "keep": keep}
    checks = ["test_shape_script_executable", "test_backup_archive"]
    w = Wording(rng)
    name = script.rsplit("/", 1)[1]
    intro = w.intro(["We back directories up by hand and keep making mistakes.",
                     "Our backups are inconsistent; a small script would fix that."])
    ask = w.pick(["Write a bash script `/app/{s}` used as `{n} SRC DEST LABEL`.", "Create an executable script `/app/{s}` with the interface `{n} SRC DEST LABEL`."], s=script, n=name)
    first = [w.pick(["It creates the gzip-compressed tarball `DEST/<name of SRC>-LABEL.tar.gz` (creating DEST if needed).",
                     "It writes `DEST/NAME-LABEL.tar.gz`, where NAME is the last path component of SRC; DEST is created when missing."])]
    details = [w.pick(["Inside the archive, paths start with the directory's own name (e.g. `site/a.txt` for SRC=/x/site).",
                       "Archive members are relative to SRC's parent, so they begin with `NAME/`."]),
               w.pick(["Make it executable.", "The file must be executable."])]
    w.require_if(checks, details, [
        (prints, "test_backup_prints_path", ["On success it prints the path of the archive it created (exactly `DEST/NAME-LABEL.tar.gz` as built from the arguments) and nothing else on stdout.",
                                             "Its only stdout output is the archive path, formed as `DEST/NAME-LABEL.tar.gz` from the arguments given."]),
        (rotate, "test_backup_rotation", ["After creating the archive, keep only the {k} newest archives of that SRC in DEST (labels are dates `YYYYMMDD`, so newest = greatest label) and delete the older ones; other files in DEST stay.",
                                          "Rotation: DEST keeps at most {k} `NAME-*.tar.gz` archives for the same NAME — delete those with the smallest labels (labels are YYYYMMDD dates). Do not touch unrelated files."]),
    ], k=keep)
    if exclude:
        checks += ["test_backup_excludes_logs", "test_backup_usage_error"]
        details.append(w.pick(["Files ending in `.log` are left out of the archive.", "Do not include `*.log` files."]))
        details.append(w.pick(["With a wrong number of arguments, print a usage line to stderr and exit 2.", "Exit with status 2 and usage help on stderr unless exactly three arguments are given."]))
    if sums:
        w.require(checks, details, "test_backup_checksums", ["Append a line `<sha256>  <archive file name>` (the `sha256sum` format, file name without directory) to `DEST/SHA256SUMS` for every archive created.",
                                                             "Each run appends the archive's checksum to `DEST/SHA256SUMS` in `sha256sum` format, using the bare file name."])
    instruction = w.compose(intro=intro, ask=ask, details=details, first=first)
    body = ["#!/bin/bash", "set -e"]
    if exclude:
        body += ["if [ $# -ne 3 ]; then echo \"usage: $(basename \"$0\") SRC DEST LABEL\" >&2; exit 2; fi"]
    body += ["src=\"${1%/}\"; dest=\"$2\"; label=\"$3\"", "name=$(basename \"$src\")", "mkdir -p \"$dest\"",
             "archive=\"$dest/$name-$label.tar.gz\"",
             "tar -C \"$(dirname \"$src\")\"" + (" --exclude='*.log'" if exclude else "") + " -czf \"$archive\" \"$name\""]
    if sums:
        body += ["(cd \"$dest\" && sha256sum \"$name-$label.tar.gz\" >> SHA256SUMS)"]
    if rotate:
        body += [f"ls \"$dest\" | grep -E \"^$name-[0-9]{{8}}\\.tar\\.gz$\" | LC_ALL=C sort -r | tail -n +{keep + 1} | while IFS= read -r old; do rm -f \"$dest/$old\"; done"]
    if prints:
        body += ["echo \"$archive\""]
    sol = [f"mkdir -p /app/{script.rsplit('/', 1)[0]}", f"cat > /app/{script} <<'EOF'", *body, "EOF", f"chmod +x /app/{script}"]
    return Draft(kind="backup", outputs=[script], instruction=instruction, files={}, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"prints": prints, "rotate": rotate, "exclude": exclude, "checksums": sums, "files": len(tree)},
                 tags=["bash", "tar", "scripting"])


KINDS = [Kind("rename", build_rename), Kind("stats", build_stats), Kind("backup", build_backup)]

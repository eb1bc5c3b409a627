"""File operations and search in a noisy project tree.

Kinds:
- ``collect``: copy the files that match an extension (and, higher up, a content keyword, a minimum
  size, no hidden paths) into a new tree that keeps their relative paths; list them in a manifest.
- ``cleanup``: delete junk files by pattern without touching look-alikes (a *directory* named like
  junk, ``notes.tmp.txt``); higher levels remove the directories left empty and write a report.
- ``dupes``: find groups of byte-identical files (same-size distractors included); higher levels
  delete every copy but the first.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import PurePosixPath
from typing import Any

from . import vocab
from .base import Draft, Kind, Wording, grow

EXTS = [".md", ".txt", ".py", ".log", ".csv", ".json", ".cfg", ".sh"]


def _content(rng: random.Random, lines: int) -> str:
    return "\n".join(rng.choice(vocab.PROSE) for _ in range(lines)) + "\n"


def _dirs(rng: random.Random, count: int, depth: int, hidden: bool) -> list[str]:
    dirs = [""]
    for _ in range(count):
        parent = rng.choice(dirs)
        if parent.count("/") + 1 >= depth:
            parent = ""
        dirs.append(f"{parent}/{rng.choice(vocab.DIR_NAMES)}".lstrip("/"))
    if hidden:
        dirs += [".cache", f"{rng.choice(dirs[1:] or ['src'])}/.old".lstrip("/")]
    return sorted(set(dirs))


def _name(rng: random.Random, ext: str, spaces: bool) -> str:
    stem = rng.choice(vocab.FILE_STEMS)
    if spaces and rng.random() < 0.3:
        stem += f" {rng.choice(vocab.WORDS)}"
    return f"{stem}_{rng.randint(1, 99)}{ext}"


def _join(d: str, name: str) -> str:
    return f"{d}/{name}" if d else name


def _hidden(path: str) -> bool:
    return any(part.startswith(".") for part in PurePosixPath(path).parts)


def build_collect(rng: random.Random, level: int) -> Draft:
    n = grow(level, 24, 1.9)
    spaces = level >= 4
    hidden = level >= 3
    ext = rng.choice(EXTS[:6])
    keyword = rng.choice([f"TODO({rng.choice(vocab.FIRST_NAMES)})", f"ticket OPS-{rng.randint(100, 9999)}",
                          f"FIXME-{rng.choice(vocab.WORDS).upper()}", f"owner: {rng.choice(vocab.FIRST_NAMES)}@{rng.choice(vocab.EMAIL_DOMAINS)}"])
    use_keyword = level >= 1
    min_size = rng.choice([300, 400, 500]) if level >= 3 else 0
    dirs = _dirs(rng, 4 + 2 * level, 2 + level // 2, hidden)
    files: dict[str, bytes] = {}
    while len(files) < n:
        d = rng.choice(dirs)
        e = ext if rng.random() < 0.45 else rng.choice(EXTS)
        body = _content(rng, rng.randint(1, 9))
        if rng.random() < 0.5:  # the keyword also appears in files of other types (distractors)
            body += f"# {keyword}\n" if rng.random() < 0.5 else f"see {keyword} before release\n"
        files[f"project/{_join(d, _name(rng, e, spaces))}"] = body.encode()

    def matches(rel: str, data: bytes) -> bool:
        return (rel.endswith(ext) and (not use_keyword or keyword.encode() in data)
                and len(data) >= min_size and not (hidden and _hidden(rel)))

    expected = sorted(p[len("project/"):] for p, data in files.items() if matches(p[len("project/"):], data))
    if not expected:  # make sure there is something to find
        rel = _join(rng.choice([d for d in dirs if not _hidden(d)]), _name(rng, ext, spaces))
        files[f"project/{rel}"] = (_content(rng, 12) + f"{keyword}\n").encode()
        expected = sorted(p[len("project/"):] for p, data in files.items() if matches(p[len("project/"):], data))
    dest = rng.choice(["collected", "selection", "export/matches", "review"])
    manifest = level >= 2
    truth: dict[str, Any] = {"dest": dest, "expected": {p: hashlib.sha256(files[f"project/{p}"]).hexdigest() for p in expected}}
    checks = ["test_collected_files"]
    w = Wording(rng)
    criteria = [w.pick(["its name ends in `{ext}`", "it has the `{ext}` extension"], ext=ext)]
    w.describe_if(criteria, [
        (use_keyword, ["it contains the exact text `{k}`", "the text `{k}` appears somewhere in it (case-sensitive)"]),
        (min_size, ["it is at least {s} bytes long", "its size is {s} bytes or more"]),
    ], k=keyword, s=min_size)
    intro = w.intro(["There is a project tree under `/app/project`.",
                     "A messy project lives in `/app/project`.",
                     "`/app/project` holds a few dozen files in nested folders."])
    ask = w.pick(["Copy every file that matches all of the criteria below into `/app/{d}`, keeping each file's path relative to `/app/project`.",
                  "Gather the matching files into `/app/{d}/`, recreating their sub-directories (paths relative to `/app/project`).",
                  "Find the files described below and copy them to `/app/{d}` with the same relative layout they have under `/app/project`."], d=dest)
    first = [w.pick(["A file matches when {c}.", "Select a file only if {c}."], c=" and ".join(criteria))]
    details: list[str] = []
    w.describe_if(details, [
        (hidden, ["Ignore hidden files and anything inside hidden directories (names starting with a dot).",
                  "Skip dot-files and dot-directories entirely."]),
        (spaces, ["Careful: some file names contain spaces.", "Some names have spaces in them; handle them correctly."]),
    ])
    if manifest:
        mf = rng.choice(["manifest.txt", "collected.lst", "matches.txt"])
        truth["manifest"] = mf
        w.require(checks, details, "test_manifest", ["Also write `/app/{m}` listing the copied files' relative paths, one per line, sorted in byte order (as `LC_ALL=C sort` does).",
                                                     "List the relative paths of the copied files in `/app/{m}` (one per line, `LC_ALL=C sort` order)."], m=mf)
    details.append(w.pick(["Do not copy anything else, and leave `/app/project` unchanged.",
                           "Only matching files belong in the destination; the originals stay where they are."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, first=first)
    find = ["find . -type f", f"-name '*{ext}'"]
    if hidden:
        find.append("-not -path '*/.*'")
    if min_size:
        find.append(f"-size +{min_size - 1}c")
    if use_keyword:
        find.append(f"-exec grep -l -F {json.dumps(keyword)} {{}} +")
    sol = ["cd /app/project", f"{' '.join(find)} | sed 's|^\\./||' | LC_ALL=C sort > /tmp/matches.txt",
           f"mkdir -p /app/{dest}",
           "while IFS= read -r f; do",
           f"    mkdir -p \"/app/{dest}/$(dirname \"$f\")\"",
           f"    cp \"$f\" \"/app/{dest}/$f\"",
           "done < /tmp/matches.txt"]
    if manifest:
        sol.append(f"cp /tmp/matches.txt /app/{truth['manifest']}")
    return Draft(kind="collect", outputs=[dest] + ([truth["manifest"]] if manifest else []), instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"files": len(files), "ext": ext, "keyword": use_keyword, "min_size": min_size,
                             "hidden": hidden, "spaces": spaces, "manifest": manifest}, tags=["find", "files"])


def build_cleanup(rng: random.Random, level: int) -> Draft:
    n = grow(level, 20, 1.9)
    spaces = level >= 4
    patterns = rng.sample(["*.tmp", "*.bak", "*~", "*.swp", "*.orig"], 1 + min(level, 3) // 2 + (level >= 3))
    dirs = _dirs(rng, 3 + 2 * level, 2 + level // 2, False)
    files: dict[str, bytes] = {}
    junk: list[str] = []

    def junk_name(pattern: str) -> str:
        return _name(rng, pattern[1:], spaces) if pattern.startswith("*.") else _name(rng, ".txt", spaces) + "~"

    for _ in range(n):
        d = rng.choice(dirs)
        if rng.random() < 0.35:
            rel = _join(d, junk_name(rng.choice(patterns)))
            junk.append(rel)
        else:
            rel = _join(d, _name(rng, rng.choice(EXTS), spaces))
        files[f"work/{rel}"] = _content(rng, rng.randint(1, 5)).encode()
    # look-alikes that must survive: a file whose name only contains the suffix, and a directory named like junk
    keep_dir = f"{rng.choice(vocab.DIR_NAMES)}{patterns[0].lstrip('*')}" if patterns[0].startswith("*.") else "keep~dir"
    files[f"work/{keep_dir}/{_name(rng, '.md', False)}"] = _content(rng, 2).encode()
    lookalike = f"{rng.choice(vocab.FILE_STEMS)}{patterns[0].lstrip('*')}.txt"
    files[f"work/{lookalike}"] = _content(rng, 2).encode()
    remove_empty = level >= 2
    empty_dirs: list[str] = []
    if remove_empty:  # folders that hold only junk: they must disappear
        for i in range(2 + level // 2):
            d = f"{rng.choice(vocab.DIR_NAMES)}-{rng.choice(vocab.WORDS)}{i}/{rng.choice(['cache', 'tmp', 'old'])}"
            for _ in range(rng.randint(1, 3)):
                rel = _join(d, junk_name(rng.choice(patterns)))
                files[f"work/{rel}"] = _content(rng, 1).encode()
                junk.append(rel)
            empty_dirs += [d, d.split("/")[0]]
    junk = sorted(set(junk))
    if not junk:
        rel = junk_name(patterns[0])
        files[f"work/{rel}"] = b"x\n"
        junk = [rel]
    keep = sorted(p for p in files if p[len("work/"):] not in junk)
    truth: dict = {"junk": junk, "empty_dirs": sorted(set(empty_dirs))}
    checks = ["test_junk_removed"]
    w = Wording(rng)
    pats = ", ".join(f"`{p}`" for p in patterns)
    intro = w.intro(["`/app/work` is full of editor and backup leftovers.",
                     "The shared folder `/app/work` has accumulated junk files over the years."])
    ask = w.pick(["Delete every regular file under `/app/work` whose name matches {p}.",
                  "Clean up `/app/work`: remove all files matching {p}, at any depth.",
                  "Remove the junk from `/app/work` — that is, every file (not directory) whose name matches {p}."], p=pats)
    details = [w.pick(["Everything else must stay exactly as it is, including directories whose names look like junk.",
                       "Do not touch any other file, and do not delete directories that merely have a junk-like name."])]
    if spaces:
        details.append(w.pick(["Some file names contain spaces.", "Watch out for spaces in file names."]))
    if remove_empty:
        w.require(checks, details, "test_empty_dirs_removed", ["Afterwards, remove the directories that the deletion left empty (but not `/app/work` itself).",
                                                               "Directories that end up empty because of the cleanup should be removed too; `/app/work` stays."])
    if level >= 3:
        rep = rng.choice(["cleanup_report.txt", "deleted.txt", "removed_files.log"])
        truth["report"] = rep
        w.require(checks, details, "test_cleanup_report", ["Write the paths of the deleted files, relative to `/app/work`, one per line in `LC_ALL=C sort` order, to `/app/{r}`.",
                                                           "Record what you deleted in `/app/{r}`: relative paths (from `/app/work`), one per line, sorted bytewise."], r=rep)
    instruction = w.compose(intro=intro, ask=ask, details=details)
    name_tests = " -o ".join(f"-name '{p}'" for p in patterns)
    sol = ["cd /app/work", f"find . -type f \\( {name_tests} \\) | sed 's|^\\./||' | LC_ALL=C sort > /tmp/junk.txt",
           "while IFS= read -r f; do rm -f -- \"$f\"; done < /tmp/junk.txt"]
    if remove_empty:
        sol.append("find . -mindepth 1 -type d -empty -delete")
    if level >= 3:
        sol.append(f"cp /tmp/junk.txt /app/{truth['report']}")
    return Draft(kind="cleanup", outputs=["work"] + ([truth["report"]] if "report" in truth else []), instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"files": len(files), "patterns": patterns, "junk": len(junk), "remove_empty": remove_empty,
                             "spaces": spaces}, guard=keep, tags=["find", "files", "cleanup"])


def build_dupes(rng: random.Random, level: int) -> Draft:
    n = grow(level, 18, 1.9)
    dirs = _dirs(rng, 3 + 2 * level, 3, False)
    files: dict[str, bytes] = {}
    originals: list[bytes] = []
    while len(files) < n:
        d = rng.choice(dirs)
        rel = f"photos/{_join(d, _name(rng, rng.choice(['.jpg', '.png', '.txt', '.pdf']), level >= 4))}"
        if originals and rng.random() < 0.35:
            data = rng.choice(originals)
        else:
            data = (_content(rng, rng.randint(1, 4)) + f"id={rng.getrandbits(32):08x}\n").encode()
            originals.append(data)
            if rng.random() < 0.3:  # same size, different bytes: a trap for size-only comparison
                twin = bytearray(data)
                twin[-2] = ord("0") if twin[-2] != ord("0") else ord("1")
                files[f"photos/{_join(rng.choice(dirs), _name(rng, '.jpg', False))}"] = bytes(twin)
        files[rel] = data
    if len(set(files.values())) == len(files):  # no duplicate drawn: add one
        first = sorted(files)[0]
        files[f"photos/copy_of_{PurePosixPath(first).name}"] = files[first]
    groups: dict[bytes, list[str]] = {}
    for path, data in files.items():
        groups.setdefault(data, []).append(path[len("photos/"):])
    dup_groups = sorted(sorted(g, key=lambda s: s.encode()) for g in groups.values() if len(g) > 1)
    out = rng.choice(["duplicates.json", "dupes.json", "report/duplicates.json"])
    dedupe = level >= 3
    truth: dict = {"report": out, "groups": dup_groups}
    checks = ["test_duplicate_groups"]
    w = Wording(rng)
    intro = w.intro(["`/app/photos` was assembled from several old backups, so many files exist more than once under different names.",
                     "We merged a few exports into `/app/photos` and now there are duplicate files all over it."])
    ask = w.pick(["Find every group of files under `/app/photos` with byte-identical content and write the groups to `/app/{o}`.",
                  "Identify the duplicated files in `/app/photos` (identical bytes, any name) and report them in `/app/{o}`."], o=out)
    details = [w.pick(["The report is a JSON array of groups; each group is an array of at least two paths relative to `/app/photos`.",
                       "Write a JSON list whose items are lists of relative paths (from `/app/photos`), one list per set of identical files."]),
               w.pick(["Sort the paths inside each group and the groups by their first path (plain byte order).",
                       "Paths within a group are sorted bytewise, and groups are ordered by their first path."]),
               w.pick(["Files that merely have the same size are not duplicates.", "Compare contents, not sizes or names."])]
    if dedupe:
        checks += ["test_duplicates_removed"]
        details.append(w.pick(["Then delete every file of each group except the first one (in that order), so one copy remains.",
                               "After writing the report, keep only the first path of each group and delete the other copies."]))
        keep = sorted(p for p in files if p[len("photos/"):] not in {q for g in dup_groups for q in g[1:]})
    else:
        keep = sorted(files)
    if level >= 4:
        details.append("Some names contain spaces.")
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = ["mkdir -p \"$(dirname /app/" + out + ")\"",
           "cd /app/photos",
           "python3 - <<'EOF'",
           "import hashlib, json, os",
           "groups = {}",
           "for root, _, names in os.walk('.'):",
           "    for name in names:",
           "        path = os.path.relpath(os.path.join(root, name), '.')",
           "        with open(path, 'rb') as fh:",
           "            groups.setdefault(hashlib.sha256(fh.read()).hexdigest(), []).append(path)",
           "dups = sorted(sorted(g, key=lambda s: s.encode()) for g in groups.values() if len(g) > 1)",
           f"json.dump(dups, open('/app/{out}', 'w'), indent=1)",
           "EOF"]
    if dedupe:
        sol += [f"jq -r '.[] | .[1:][]' /app/{out} | while IFS= read -r f; do rm -f -- \"$f\"; done"]
    return Draft(kind="dupes", outputs=[out, "photos"], instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"files": len(files), "groups": len(dup_groups), "dedupe": dedupe}, guard=keep,
                 tags=["files", "hashing", "json"])


KINDS = [Kind("collect", build_collect), Kind("cleanup", build_cleanup), Kind("dupes", build_dupes, min_level=2)]

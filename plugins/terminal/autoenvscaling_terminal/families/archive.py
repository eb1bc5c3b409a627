"""Archives and compression: tar, gzip, xz, bzip2 and zip.

Kinds:
- ``extract_select``: unpack a delivery and repack a subset. Higher levels nest a tar.xz inside a
  zip, ask for a zip output, and split the download into parts that must be joined first.
- ``verify``: find the files whose checksum does not match the manifest, then repack only the good
  ones; higher levels hide the manifest inside the archive, ship a fresh manifest with the repacked
  files, and spread the delivery over two archives.
- ``compress``: compress rotated logs in place, leave the live log alone; higher levels pick the
  compressor by size and write an index of uncompressed sizes.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import random
import tarfile
import zipfile

from . import vocab
from .base import Draft, Kind, Wording, grow

FIXED_MTIME = 1_700_000_000


def tar_bytes(files: dict[str, bytes]) -> bytes:
    """An uncompressed tar with fixed metadata, so the same files always give the same bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(files[name]), FIXED_MTIME, 0o644
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(files[name]))
    return buf.getvalue()


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(2023, 11, 14, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buf.getvalue()


def _tree(rng: random.Random, n: int) -> dict[str, bytes]:
    tree: dict[str, bytes] = {}
    while len(tree) < n:
        d = rng.choice(["etc", "etc/app", "docs", "var/log", "share/data", "conf.d", "bin"])
        ext = rng.choice([".conf", ".conf", ".txt", ".log", ".md", ".ini", ".sh"])
        body = "\n".join(rng.choice(vocab.PROSE) if ext != ".conf" else f"{rng.choice(vocab.WORDS)} = {rng.randint(1, 999)}"
                         for _ in range(rng.randint(2, 10))) + "\n"
        tree[f"{d}/{rng.choice(vocab.FILE_STEMS + vocab.WORDS)}{ext}"] = body.encode()
    return tree


def _digests(files: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}


def build_extract_select(rng: random.Random, level: int) -> Draft:
    tree = _tree(rng, grow(level, 10, 1.8))
    if not any(p.endswith(".conf") for p in tree):
        tree["etc/default.conf"] = b"enabled = 1\n"
    nested, zip_out, split = level >= 2, level >= 3, level >= 4
    root = rng.choice(["release", "payload", "site-backup", "bundle"])
    inner = {f"{root}/{p}": data for p, data in tree.items()}
    if nested:
        archive_name = f"{root}.zip"
        blob = zip_bytes({f"{root}.tar.xz": lzma.compress(tar_bytes(inner))})
    else:
        archive_name = f"{root}.tar.gz"
        blob = gzip.compress(tar_bytes(inner), mtime=0)
    files: dict[str, bytes] = {}
    if split:
        cut = len(blob) // 2
        files[f"incoming/{archive_name}.part-aa"], files[f"incoming/{archive_name}.part-ab"] = blob[:cut], blob[cut:]
    else:
        files[f"incoming/{archive_name}"] = blob
    dest = rng.choice(["extracted", "unpacked", "restore"])
    out = rng.choice(["selected", "configs", "conf_only"]) + (".zip" if zip_out else ".tar.gz")
    selected = {f"{root}/{p}": d for p, d in tree.items() if p.endswith(".conf")}
    truth = {"dest": dest, "extracted": _digests(inner), "out": out, "selected": _digests(selected) if level >= 1 else {}}
    checks = ["test_extracted_tree"] + (["test_selection_members", "test_selection_contents"] if level >= 1 else [])
    w = Wording(rng)
    src = f"`/app/incoming/{archive_name}`" if not split else f"`/app/incoming/{archive_name}`, split into `.part-aa` and `.part-ab`"
    intro = w.intro([f"A delivery arrived as {src}.", f"We received {src} from a partner."])
    ask = w.pick(["Extract its contents into `/app/{d}` so that the top-level `{r}/` directory ends up at `/app/{d}/{r}/`.",
                  "Unpack it under `/app/{d}` (you should get `/app/{d}/{r}/...`).",
                  "Please unpack the delivery into `/app/{d}`; it contains a single top-level folder `{r}`."], d=dest, r=root)
    details: list[str] = []
    w.describe_if(details, [
        (split, ["Join the parts in order (aa, then ab) to get the original file first.", "The two parts concatenated in order form the archive."]),
        (nested, ["The zip wraps an xz-compressed tarball: unpack that too, so `/app/{d}` holds the files themselves, not the inner archive.",
                  "Inside the zip there is a `.tar.xz`; extract it as well — the final tree must contain the real files."]),
    ], d=dest)
    if level >= 1:
        fmt = "a zip archive" if zip_out else "a gzip-compressed tar archive"
        details.append(w.pick(["Then create `/app/{o}`, {f} containing only the `.conf` files, stored under the same paths they have in the delivery (starting with `{r}/`).",
                               "Afterwards build `/app/{o}` ({f}) with just the `*.conf` files; member names keep the delivery's layout, e.g. `{r}/etc/...`."],
                              o=out, f=fmt, r=root))
    details.append(w.pick(["Keep the original download in place.", "Do not delete the files in `/app/incoming`."]))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = [f"mkdir -p /app/{dest}", "cd /app/incoming"]
    if split:
        sol.append(f"cat {archive_name}.part-aa {archive_name}.part-ab > /tmp/{archive_name}")
        path = f"/tmp/{archive_name}"
    else:
        path = f"/app/incoming/{archive_name}"
    if nested:
        sol += ["mkdir -p /tmp/outer", f"unzip -o -q {path} -d /tmp/outer", f"tar -xJf /tmp/outer/{root}.tar.xz -C /app/{dest}"]
    else:
        sol.append(f"tar -xzf {path} -C /app/{dest}")
    if level >= 1:
        sol += [f"cd /app/{dest}", f"find {root} -type f -name '*.conf' | LC_ALL=C sort > /tmp/conf.txt",
                f"zip -q /app/{out} -@ < /tmp/conf.txt" if zip_out else f"tar -czf /app/{out} -T /tmp/conf.txt"]
    return Draft(kind="extract_select", outputs=[dest] + ([out] if level >= 1 else []), instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"files": len(tree), "nested": nested, "zip_output": zip_out, "split": split}, tags=["tar", "zip", "archives"])


def build_verify(rng: random.Random, level: int) -> Draft:
    n = grow(level, 8, 1.8)
    data = {f"{rng.choice(['img', 'data', 'docs'])}/{rng.choice(vocab.FILE_STEMS)}_{i:03d}.{rng.choice(['bin', 'dat', 'txt'])}":
            bytes(rng.getrandbits(8) for _ in range(rng.randint(64, 600))) for i in range(n)}
    manifest = _digests(data)
    corrupted = sorted(rng.sample(sorted(data), max(1, n // 4)))
    shipped = dict(data)
    for p in corrupted:  # flip one byte: same size, different checksum
        b = bytearray(shipped[p])
        b[rng.randrange(len(b))] ^= 0xFF
        shipped[p] = bytes(b)
    sums = "".join(f"{h}  {p}\n" for p, h in manifest.items()).encode()
    inside, two = level >= 3, level >= 4
    files: dict[str, bytes] = {}
    if two:
        names = sorted(shipped)
        half = len(names) // 2
        files["delivery/part1.tar.gz"] = gzip.compress(tar_bytes({p: shipped[p] for p in names[:half]} | ({"SHA256SUMS": sums} if inside else {})), mtime=0)
        files["delivery/part2.zip"] = zip_bytes({p: shipped[p] for p in names[half:]})
    elif inside:
        files["delivery/payload.tar.bz2"] = bz2.compress(tar_bytes(shipped | {"SHA256SUMS": sums}))
    else:
        files["delivery/payload.tar.gz"] = gzip.compress(tar_bytes(shipped), mtime=0)
    if not inside:
        files["delivery/SHA256SUMS"] = sums
    report = rng.choice(["corrupted.txt", "bad_files.txt", "report/corrupted.lst"])
    clean = rng.choice(["clean.zip", "verified.zip", "good_files.zip"])
    good = {p: d for p, d in data.items() if p not in corrupted}
    truth = {"report": report, "corrupted": corrupted, "clean": clean, "good": _digests(good) if level >= 1 else {},
             "clean_manifest": level >= 3}
    checks = ["test_corrupted_list"] + (["test_clean_archive"] if level >= 1 else [])
    w = Wording(rng)
    what = {False: "`/app/delivery/payload.tar.gz` with a checksum manifest `/app/delivery/SHA256SUMS`",
            True: "`/app/delivery/payload.tar.bz2`; its checksum manifest `SHA256SUMS` is inside the archive"}[inside]
    if two:
        what = "two archives, `/app/delivery/part1.tar.gz` and `/app/delivery/part2.zip`, with the checksum manifest `SHA256SUMS` inside the tarball"
    intro = w.intro([f"A data transfer arrived as {what}.", f"The vendor sent {what}."])
    ask = w.pick(["Some files were damaged in transit. Find every file whose SHA-256 does not match the manifest and list their paths in `/app/{r}`.",
                  "Check each file against the manifest (SHA-256) and write the paths of the ones that do not match to `/app/{r}`."], r=report)
    details = [w.pick(["Use the paths exactly as they appear in the manifest, one per line, sorted bytewise.",
                       "One path per line (as written in the manifest), in `LC_ALL=C sort` order."])]
    if level >= 3:
        details.append(w.pick(["Then create `/app/{c}`, a zip archive holding only the intact files under their manifest paths, plus a new `SHA256SUMS` at the top of the zip that lists exactly those files (same format as the original manifest).",
                               "Package the files that passed the check into the zip `/app/{c}` under their manifest paths, together with a fresh `SHA256SUMS` (sha256sum format, at the zip's top level) covering only the files in the zip."], c=clean))
    elif level >= 1:
        details.append(w.pick(["Then create `/app/{c}`, a zip archive holding only the intact files under their manifest paths (no manifest, no damaged files).",
                               "Package the files that passed the check into the zip `/app/{c}`, keeping their manifest paths; leave out the damaged ones and the manifest itself."], c=clean))
    details.append(w.pick(["Leave `/app/delivery` as it is.", "Do not modify the delivery."]))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = ["rm -rf /tmp/check && mkdir -p /tmp/check && cd /tmp/check"]
    if two:
        sol += ["tar -xzf /app/delivery/part1.tar.gz", "unzip -o -q /app/delivery/part2.zip"]
    elif inside:
        sol.append("tar -xjf /app/delivery/payload.tar.bz2")
    else:
        sol += ["tar -xzf /app/delivery/payload.tar.gz", "cp /app/delivery/SHA256SUMS ."]
    sol += [f"mkdir -p \"$(dirname /app/{report})\"",
            f"sha256sum -c SHA256SUMS 2>/dev/null | grep -v ': OK$' | sed 's/: FAILED.*$//' | LC_ALL=C sort > /app/{report} || true"]
    if level >= 3:
        sol += ["sha256sum -c SHA256SUMS 2>/dev/null | grep ': OK$' | sed 's/: OK$//' > /tmp/good.txt",
                "xargs sha256sum < /tmp/good.txt > SHA256SUMS",
                f"{{ cat /tmp/good.txt; echo SHA256SUMS; }} | zip -q /app/{clean} -@"]
    elif level >= 1:
        sol.append(f"sha256sum -c SHA256SUMS 2>/dev/null | grep ': OK$' | sed 's/: OK$//' | zip -q /app/{clean} -@")
    return Draft(kind="verify", outputs=[report] + ([clean] if level >= 1 else []), instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"files": n, "corrupted": len(corrupted), "manifest_inside": inside, "two_archives": two},
                 tags=["checksums", "tar", "zip"])


def build_compress(rng: random.Random, level: int) -> Draft:
    n = grow(level, 4, 1.7)
    service = rng.choice(vocab.SERVICES)
    logs: dict[str, bytes] = {}
    for i in range(1, n + 1):
        size = rng.choice([rng.randint(5, 40), rng.randint(60, 200)])
        logs[f"logs/{service}.log.{i}"] = "".join(f"{rng.choice(['INFO', 'WARN'])} {rng.choice(vocab.PROSE)}\n" for _ in range(size)).encode()
    logs[f"logs/{service}.log"] = f"INFO {service} started\n".encode()
    threshold = rng.choice([4000, 6000, 8000]) if level >= 3 else None
    index = level >= 2
    rotated = sorted(p for p in logs if not p.endswith(".log"))
    expect = {p[len("logs/"):] + (".xz" if threshold is not None and len(logs[p]) > threshold else ".gz"):
              hashlib.sha256(logs[p]).hexdigest() for p in rotated}
    truth: dict = {"compressed": expect, "originals": [p[len("logs/"):] for p in rotated], "live": f"{service}.log"}
    checks = ["test_logs_compressed", "test_shape_uncompressed_removed"]
    w = Wording(rng)
    intro = w.intro([f"`/app/logs` holds the live `{service}.log` and its rotated predecessors `{service}.log.1`, `{service}.log.2`, ...",
                     f"The disk is filling up: `/app/logs` has many rotated `{service}` logs (`{service}.log.N`) next to the live `{service}.log`."])
    ask = w.pick(["Compress every rotated log in place (the compressed file replaces the original), but leave the live log alone.",
                  "Replace each rotated log with a compressed version of itself; do not touch the live log."])
    if threshold:
        details = [w.pick(["Files larger than {t} bytes get xz (`NAME.xz`); the rest get gzip (`NAME.gz`).",
                           "Use `xz` for logs over {t} bytes and `gzip` for the others, with the usual `.xz`/`.gz` suffixes."], t=threshold)]
    else:
        details = [w.pick(["Use gzip, so `{s}.log.1` becomes `{s}.log.1.gz`.", "gzip them (`NAME` -> `NAME.gz`)."], s=service)]
    details.append(w.pick(["The uncompressed rotated files must be gone afterwards.", "No uncompressed copy of a rotated log may remain."]))
    if index:
        truth["index"] = sorted([[name, len(logs["logs/" + name.rsplit(".", 1)[0]])] for name in expect], key=lambda r: r[0].encode())
        w.require(checks, details, "test_compression_index", ["Write `/app/logs/INDEX` with one line per compressed file: its name and the original size in bytes, separated by a space, sorted by name (bytewise).",
                                                              "Also create `/app/logs/INDEX`: lines `NAME SIZE` (compressed file name, uncompressed size in bytes), ordered by name with `LC_ALL=C sort`."])
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = ["cd /app/logs"]
    if index:
        sol.append(f"for f in {service}.log.[0-9]*; do echo \"$f $(stat -c %s \"$f\")\"; done > /tmp/sizes")
    if threshold:
        sol += [f"for f in {service}.log.[0-9]*; do",
                f"    if [ \"$(stat -c %s \"$f\")\" -gt {threshold} ]; then xz \"$f\"; else gzip -n \"$f\"; fi", "done"]
    else:
        sol.append(f"gzip -n {service}.log.[0-9]*")
    if index:
        sol.append("while read -r f size; do if [ -e \"$f.xz\" ]; then echo \"$f.xz $size\"; else echo \"$f.gz $size\"; fi; done < /tmp/sizes | LC_ALL=C sort > INDEX")
    return Draft(kind="compress", outputs=["logs"], instruction=instruction, files=logs, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"rotated": len(rotated), "threshold": threshold, "index": index},
                 guard=[f"logs/{service}.log"], tags=["gzip", "xz", "compression"])


KINDS = [Kind("extract_select", build_extract_select), Kind("verify", build_verify), Kind("compress", build_compress)]

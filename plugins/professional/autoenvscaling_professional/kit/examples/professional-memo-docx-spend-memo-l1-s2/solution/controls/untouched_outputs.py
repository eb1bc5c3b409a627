"""Negative control "untouched": the input handed back as the answer. Each output the workspace
does not have yet becomes a copy of the first workspace file of the same type (contacts.csv as
contacts_clean.csv, the letter template as every letter); an output that edits an input in place is
left as it is. It must score 0."""

import json
import os
import shutil

with open("/solution/params.json", encoding="utf-8") as fh:
    OUTPUTS = json.load(fh)["outputs"]

inputs = sorted(os.path.relpath(os.path.join(d, f), "/app") for d, _, files in os.walk("/app") for f in files)
for rel, kind in OUTPUTS.items():
    target = os.path.join("/app", rel)
    if os.path.exists(target):
        print("left as it is:", rel)
        continue
    same = [p for p in inputs if p.lower().endswith("." + kind)]
    if same:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        shutil.copyfile(os.path.join("/app", same[0]), target)
        print(f"copied {same[0]} to {rel}")

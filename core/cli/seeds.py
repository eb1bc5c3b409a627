"""``--seeds`` for commands that generate tasks (the core's and plugins'): "N", "A-B" or "1,5,7",
or a mix ("0-3,9")."""

from __future__ import annotations

from ..errors import UsageError


def parse_seeds(text: str) -> list[int]:
    out: list[int] = []
    try:
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            if "-" in part[1:]:
                a, b = part[0] + part[1:].split("-", 1)[0], part[1:].split("-", 1)[1]
                out += list(range(int(a), int(b) + 1))
            else:
                out.append(int(part))
    except ValueError:
        raise UsageError(f"cannot read seeds {text!r}", hint="use N, A-B or a comma list such as 0,3,7") from None
    if not out:
        raise UsageError(f"no seeds in {text!r}", hint="use N, A-B or a comma list such as 0,3,7")
    return out

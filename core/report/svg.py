"""Small SVG charts drawn by our own code, so a report is one self-contained file (no CDN, no JS).

Each function returns an ``<svg>`` element with an explicit width, height and viewBox, a <title> for
each mark (hover text), and nothing that needs the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

PALETTE = ("#3b6ea5", "#d1813b", "#4a9a5b", "#b8484f", "#7d5ba6", "#8c6d4f", "#c76fa8", "#6b7b8c")
WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 56


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval, in a named series at a category (x) position."""

    series: str
    category: str
    value: float
    low: float
    high: float
    label: str = ""


def _frame(body: list[str], *, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}" class="chart">'
            f'<title>{escape(title)}</title>' + "".join(body) + "</svg>")


def _y_axis(top: float = 1.0, *, percent: bool = True) -> list[str]:
    out = []
    for i in range(5):
        frac = i / 4
        y = _y(frac, 1)
        label = f"{frac * top:.0%}" if percent else f"{frac * top:g}"
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{label}</text>')
    return out


def _y(value: float, top: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (1 - (value / top if top else 0))


def _legend(series: list[str], y: float) -> list[str]:
    out, x = [], LEFT
    for i, name in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{x + 14}" y="{y}" font-size="11">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    return out


def interval_chart(points: list[Interval], *, title: str) -> str:
    """Points with whiskers (e.g. the valid-environment rate and its Wilson interval) per category,
    one colour per series."""
    categories = sorted({p.category for p in points}, key=_natural)
    series = sorted({p.series for p in points})
    body = _y_axis()
    if not categories:
        body.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no data</text>')
        return _frame(body, title=title)
    slot = (WIDTH - LEFT - RIGHT) / len(categories)
    for ci, cat in enumerate(categories):
        cx = LEFT + slot * (ci + 0.5)
        body.append(f'<text x="{cx:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" font-size="11">{escape(cat)}</text>')
        for si, name in enumerate(series):
            p = next((q for q in points if q.category == cat and q.series == name), None)
            if p is None:
                continue
            x = cx + (si - (len(series) - 1) / 2) * min(18.0, slot / (len(series) + 1))
            color = PALETTE[si % len(PALETTE)]
            tip = escape(f"{name} {cat}: {p.value:.1%} [{p.low:.1%}, {p.high:.1%}] {p.label}".strip())
            body.append(f'<g class="mark"><title>{tip}</title>'
                        f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_y(p.low, 1):.1f}" y2="{_y(p.high, 1):.1f}" '
                        f'stroke="{color}" stroke-width="2"/>'
                        f'<circle cx="{x:.1f}" cy="{_y(p.value, 1):.1f}" r="4" fill="{color}"/></g>')
    body += _legend(series, HEIGHT - 12)
    return _frame(body, title=title)


def bar_chart(groups: dict[str, dict[str, float]], *, title: str, percent: bool = False,
              band: tuple[float, float] | None = None) -> str:
    """Grouped bars: ``{category: {series: value}}``. ``band`` shades a range of categories' x
    positions given as fractions of the axis (used to mark the calibration band on a histogram)."""
    categories = list(groups)
    series = sorted({s for g in groups.values() for s in g})
    top = 1.0 if percent else max([v for g in groups.values() for v in g.values()] + [1.0])
    if not percent:
        top = float(int(top) + (0 if top == int(top) else 1))
    body = []
    slot = (WIDTH - LEFT - RIGHT) / max(1, len(categories))
    if band is not None:
        x0 = LEFT + (WIDTH - LEFT - RIGHT) * band[0]
        x1 = LEFT + (WIDTH - LEFT - RIGHT) * band[1]
        body.append(f'<rect class="band" x="{x0:.1f}" y="{TOP}" width="{x1 - x0:.1f}" height="{HEIGHT - TOP - BOTTOM}" '
                    f'fill="#4a9a5b" opacity="0.12"><title>calibration band</title></rect>')
    body += _y_axis(top, percent=percent)
    width = slot * 0.8 / max(1, len(series))
    for ci, cat in enumerate(categories):
        x0 = LEFT + slot * ci + slot * 0.1
        body.append(f'<text x="{LEFT + slot * (ci + 0.5):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" '
                    f'font-size="11">{escape(cat)}</text>')
        for si, name in enumerate(series):
            value = groups[cat].get(name, 0.0)
            y = _y(value, top)
            color = PALETTE[si % len(PALETTE)]
            shown = f"{value:.1%}" if percent else f"{value:g}"
            body.append(f'<rect class="mark" x="{x0 + si * width:.1f}" y="{y:.1f}" width="{max(1.0, width - 2):.1f}" '
                        f'height="{max(0.0, HEIGHT - BOTTOM - y):.1f}" fill="{color}">'
                        f'<title>{escape(f"{name} {cat}: {shown}")}</title></rect>')
    if len(series) > 1 or (series and series[0]):
        body += _legend(series, HEIGHT - 12)
    return _frame(body, title=title)


def _natural(text: str) -> tuple[int, str]:
    digits = "".join(ch for ch in text if ch.isdigit())
    return (int(digits) if digits else -1, text)

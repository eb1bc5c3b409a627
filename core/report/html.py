"""The static HTML report of a run: ``<out>/report.html``, one self-contained file.

Everything comes from the run database (and the suite for the pool size): the valid-environment
rate with Wilson intervals per proposer and round, cost per valid environment per model, the
solver's pass-rate histogram against the calibration band, the domain mix, per-round figures and
example tasks with their gate evidence. Charts are inline SVG from ``svg.py``; no script, no CDN.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from ..flywheel import metrics as m
from ..flywheel.rundb import RunDB, UnitRecord
from ..flywheel.summary import outcomes, rollout_groups
from ..suite.layout import atomic_write
from .svg import Interval, bar_chart, interval_chart

REPORT = "report.html"
EXAMPLES = 4


def write_report(out: str | Path, db: RunDB, suite: Any) -> Path:
    """Render and write ``<out>/report.html`` atomically (a crash never leaves half a report)."""
    path = Path(out) / REPORT
    atomic_write(path, render_report(db, pool_size=len(suite), title=Path(out).name).encode("utf-8"))
    return path


def render_report(db: RunDB, *, pool_size: int, title: str) -> str:
    config = db.config()
    units = db.units()
    outs = outcomes(units)
    rollouts = db.rollouts()
    band = tuple(config.get("settings", {}).get("calibration_band", (0.25, 0.75)))
    template = Template(resources.files("autoenvscaling.report").joinpath("templates", "report.html").read_text("utf-8"))
    return template.substitute(
        title=escape(title), subtitle=escape(_subtitle(config)),
        cards=_cards(outs, rollouts, pool_size, len({u.round for u in units})),
        valid_chart=interval_chart(_interval_points(outs), title="valid-environment rate per proposer and round"),
        valid_table=_valid_table(outs), cost_table=_cost_table(outs),
        pass_chart=bar_chart(_histogram(rollouts), title="solver mean reward per task", band=(band[0], band[1])),
        pass_table=_pass_table(rollouts),
        domain_chart=bar_chart(_domain_mix(units), title="proposals and admissions per domain"),
        round_table=_round_table(db), training=_training(db), examples=_examples(units))


def _subtitle(config: dict[str, Any]) -> str:
    parts = [f"seed {config.get('seed')}", f"{config.get('rounds')} round(s)",
             "proposers " + ", ".join(f"{k} ({v:g})" for k, v in sorted(config.get("proposers", {}).items()))]
    if config.get("mix"):
        parts.append("mix " + ", ".join(f"{k}={v:g}" for k, v in sorted(config["mix"].items())))
    models = (("proposer_model", "proposer model"), ("solver_model", "solver"))
    parts += [f"{label} {config[key]}" for key, label in models if config.get(key)]
    return " · ".join(parts)


def _card(label: str, value: str) -> str:
    return f'<div class="card"><div class="value">{escape(value)}</div><div class="label">{escape(label)}</div></div>'


def _pct(rate: m.Rate) -> str:
    return "n/a" if rate.value is None else f"{rate.value:.1%}"


def _cards(outs: list[m.ProposalOutcome], rollouts: list[Any], pool_size: int, rounds: int) -> str:
    valid = m.valid_environment_rate(outs)
    spent = [o.cost_usd for o in outs if o.cost_usd is not None]
    useful = m.useful_group_rate(rollout_groups(rollouts))
    return "".join([
        _card("proposals", str(len(outs))),
        _card(f"valid-environment rate ({valid.successes}/{valid.n})", _pct(valid)),
        _card("admitted", str(sum(o.outcome == "admitted" for o in outs))),
        _card("pool size now", str(pool_size)),
        _card("rounds", str(rounds)),
        _card("useful-group rate", _pct(useful)),
        _card("spent (USD)", f"{sum(spent):.4f}" + ("+" if len(spent) < len(outs) else "")),
    ])


def _interval_points(outs: list[m.ProposalOutcome]) -> list[Interval]:
    rates = m.valid_environment_rates(outs, key=lambda o: (o.proposer, o.round))
    return [Interval(series=proposer, category=f"round {rnd}", value=rate.value, low=rate.low or 0.0,
                     high=rate.high or 0.0, label=f"({rate.successes}/{rate.n})")
            for (proposer, rnd), rate in rates.items() if rate.value is not None]


def _table(headers: list[str], rows: list[list[str]], *, numeric: frozenset[int] | set[int] = frozenset(),
           cls: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{c}</td>' for i, c in enumerate(r)) + "</tr>"
                   for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body or "<tr><td>none</td></tr>"}</tbody></table>'


def _valid_table(outs: list[m.ProposalOutcome]) -> str:
    rows = []
    groups = m.group_by(outs, lambda o: (o.proposer, o.round))
    for (proposer, rnd), items in sorted(groups.items()):
        rate = m.valid_environment_rate(items)
        count = Counter(o.outcome for o in items)
        interval = "" if rate.value is None else f"[{rate.low:.1%}, {rate.high:.1%}]"
        rows.append([escape(proposer), str(rnd), f"{rate.successes}/{rate.n}", _pct(rate), interval,
                     str(count["admitted"]), str(count["failed_calibration"]), str(count["failed_validation"]),
                     str(count["refused"]), str(count["infrastructure"])])
    return _table(["proposer", "round", "valid/scored", "rate", "95% interval", "admitted", "failed calibration",
                   "failed validation", "refused", "infrastructure"], rows, numeric={1, 2, 3, 5, 6, 7, 8, 9})


def _cost_table(outs: list[m.ProposalOutcome]) -> str:
    rows = []
    for model, c in m.cost_per_valid_environment(outs).items():
        per = "unknown price" if c.unpriced == c.proposals else ("n/a (none valid)" if c.per_valid_usd is None
                                                               else f"{c.per_valid_usd:.4f}")
        rows.append([escape(model), str(c.proposals), str(c.valid), f"{c.total_usd:.4f}", per, str(c.unpriced)])
    return _table(["proposer model", "proposals", "valid", "spent (USD)", "USD per valid environment",
                   "unpriced proposals"], rows, numeric={1, 2, 3, 4, 5})


def _histogram(rollouts: list[Any]) -> dict[str, dict[str, float]]:
    bins = [f"{i / 10:.1f}-{(i + 1) / 10:.1f}" for i in range(10)]
    counts: dict[str, dict[str, float]] = {b: {"tasks": 0.0} for b in bins}
    for group in rollout_groups(rollouts):
        mean = sum(group) / len(group)
        counts[bins[min(9, int(mean * 10))]]["tasks"] += 1
    return counts


def _pass_table(rollouts: list[Any]) -> str:
    rows = []
    records = [m.RolloutRecord(task=r.task_name, reward=r.reward, round=r.round, domain=r.domain)
               for r in rollouts if r.reward is not None]
    for (rnd, domain), p in m.solver_pass_rates(records).items():
        groups = rollout_groups([r for r in rollouts if r.round == rnd and r.domain == domain])
        useful = m.useful_group_rate(groups)
        rows.append([str(rnd), escape(domain), str(p.n), f"{p.mean_reward:.2f}", f"{p.solved:.1%}",
                     f"{_pct(useful)} ({useful.successes}/{useful.n})"])
    return _table(["round", "domain", "rollouts", "mean reward", "fully solved", "useful-group rate"], rows,
                  numeric={0, 2, 3, 4})


def _domain_mix(units: list[UnitRecord]) -> dict[str, dict[str, float]]:
    mix: dict[str, dict[str, float]] = defaultdict(lambda: {"proposed": 0.0, "admitted": 0.0})
    for u in units:
        mix[u.domain]["proposed"] += 1
        mix[u.domain]["admitted"] += u.outcome == "admitted"
    return dict(sorted(mix.items()))


def _round_table(db: RunDB) -> str:
    rows = []
    for rnd, data in db.metrics().items():
        valid = m.Rate.model_validate(data["valid_rate"])
        useful = m.Rate.model_validate(data["metrics"]["useful_group_rate"])
        rows.append([str(rnd), str(data["proposals"]), str(data["admitted"]), str(data["left_pool"]),
                     str(data["pool_size"]), escape(str(valid)), _pct(useful)])
    return _table(["round", "proposals", "admitted", "left the pool", "pool size", "valid-environment rate",
                   "useful-group rate"], rows, numeric={0, 1, 2, 3, 4})


CURVES = (("reward_mean", "reward mean", None, None), ("useful_group_rate", "useful-group rate", None, None),
          ("held_out_pass_rate", "held-out pass rate", "held_out_low", "held_out_high"))


def _training(db: RunDB) -> str:
    """The training curves of a run that trained (``--train``): per round and step, the rollouts'
    reward mean, the useful-group rate, and the held-out pass rate with its Wilson interval."""
    trainings = [t for t in db.trainings() if t.history]
    if not trainings:
        return ""
    points = []
    for t in trainings:
        for row in t.history:
            category = f"r{t.round} s{int(row.get('step', 0))}"
            for key, name, low, high in CURVES:
                if key in row:
                    def unit(v: float) -> float:
                        return min(max(float(v), 0.0), 1.0)  # the chart's scale; proposer rewards go below 0

                    value = unit(row[key])
                    points.append(Interval(series=name, category=category, value=value,
                                           low=unit(row.get(low or key, value)), high=unit(row.get(high or key, value))))
    chart = interval_chart(points, title="training: reward, useful-group rate and held-out pass rate per step")
    return f'<h2 id="training">Training</h2>\n{chart}'


def _examples(units: list[UnitRecord]) -> str:
    admitted = [u for u in units if u.outcome == "admitted" and u.report]
    others = [u for u in units if u.outcome != "admitted" and u.report]
    chosen = (admitted + others)[:EXAMPLES]
    if not chosen:
        return '<p class="muted">No task reached the gates in this run.</p>'
    return "".join(_example(u) for u in chosen)


def _example(u: UnitRecord) -> str:
    report = u.report or {}
    rows = []
    for g in report.get("gates", []):
        evidence = "".join(_evidence(e) for e in g.get("evidence", []))
        rows.append([escape(g["name"]), f'<span class="status-{escape(g["status"])}">{escape(g["status"])}</span>',
                     f'{g.get("seconds", 0):.2f}', escape(g.get("reason", "")) + evidence])
    meta = f"{u.domain} · {u.proposer}" + (f" · {u.model}" if u.model else "") + f" · round {u.round}"
    if u.parent:
        meta += f" · {u.direction} variant of {u.parent}"
    return (f'<div class="example"><h3>{escape(u.task_name or u.key)} '
            f'<span class="outcome-{escape(u.outcome)}">{escape(u.outcome)}</span></h3>'
            f'<p class="muted">{escape(meta)}</p><p>{escape(u.reason or "")}</p>'
            + _table(["gate", "status", "seconds", "reason and evidence"], rows, numeric={2}, cls="gates") + "</div>")


def _evidence(e: dict[str, Any]) -> str:
    parts = []
    if e.get("command"):
        parts.append(f"<div><code>{escape(e['command'])}</code></div>")
    if e.get("values"):
        parts.append("<div>" + escape(", ".join(f"{k}={v}" for k, v in e["values"].items()))[:600] + "</div>")
    if (e.get("output_tail") or "").strip():
        parts.append(f"<pre>{escape(e['output_tail'][-1500:])}</pre>")
    return f"<details><summary>evidence</summary>{''.join(parts)}</details>" if parts else ""

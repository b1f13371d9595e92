"""``ppo-doctor sweep --format html``: one self-contained page with a strip plot per top parameter.

Each plot puts every run at its parameter value (x; categories at evenly spaced positions) on the
row of its verdict (y), with a small fixed offset per run of the same value and verdict so that
equal runs do not hide each other, and the best split drawn as a dotted line.  Plots are PNG data
URIs; matplotlib is imported only here (through :class:`matplotlib.figure.Figure`, no pyplot).
Every string from a log is escaped (``html.escape``), and the page forbids scripts (CSP), as the
run report does (:mod:`ppo_doctor.report.html`).
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

from .._version import __version__
from ..report.escape import html_text as e
from ..report.html import CSP, CSS
from .attribution import Split
from .cells import HEADER, cost_summary, params_note, row_cells, shown_splits, split_note, tally
from .report import SweepReport

MAX_PLOTS = 4
VERDICTS = ("healthy", "unknown", "unhealthy", "error")
COLORS = {"healthy": "#2e7d32", "unknown": "#b26a00", "unhealthy": "#c62828", "error": "#555555"}


def render_html(report: SweepReport) -> str:
    body = [
        "<h1>ppo-doctor sweep</h1>",
        f'<p class="muted">ppo-doctor {e(__version__)}: {e(tally(report))}</p>',
        *([f"<p>{e(cost_summary(report))}</p>"] if cost_summary(report) else []),
        "<h2>What separates them</h2>",
    ]
    splits = shown_splits(report)
    if splits:
        body.append("<ol>" + "".join(f"<li><b>{e(s.label())}</b> <span class=\"muted\">({e(split_note(s))})</span></li>" for s in splits) + "</ol>")
    else:
        body.append("<p>Nothing: no parameter splits the runs by verdict or symptom.</p>")
    if params_note(report):
        body.append(f"<h3>Parameters</h3><p>{e(params_note(report))}</p>")
    cautions = report.attribution.cautions if report.attribution else []
    if cautions:
        body.append("<h3>Cautions</h3><ul>" + "".join(f"<li>{e(c)}</li>" for c in cautions) + "</ul>")
    body += [f'<img class="plot" alt="{e(s.parameter)} against verdict" src="{uri}">' for s, uri in _plots(report, splits)]
    rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row_cells(r)) + "</tr>" for r in report.rows)
    body.append("<h2>Runs</h2><table><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEADER) + f"</tr>{rows}</table>")
    if report.tables:
        body.append("<h3>Sweep tables joined</h3><ul>" + "".join(f"<li>{e(t)}</li>" for t in report.tables) + "</ul>")
    if report.errors:
        body.append("<h2>Read problems and notes</h2><ul>" + "".join(f"<li>{e(x.level)}: {e(str(x))}</li>" for x in report.errors) + "</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>ppo-doctor sweep</title><style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _plots(report: SweepReport, splits: list[Split]) -> list[tuple[Split, str]]:
    """One strip plot per distinct top parameter (its best split), at most ``MAX_PLOTS``."""
    chosen: list[Split] = []
    for s in splits:
        if s.parameter not in {c.parameter for c in chosen}:
            chosen.append(s)
    return [(s, _strip(report, s)) for s in chosen[:MAX_PLOTS]]


def _strip(report: SweepReport, split: Split) -> str:
    from matplotlib.figure import Figure

    from ..report.plots import label

    values: list[tuple[Any, str]] = []
    for r in report.rows:
        v = r.params.get(split.parameter)
        if v is not None:
            values.append((v, r.verdict))
    numeric = split.kind == "numeric"
    cats = sorted({str(v) for v, _ in values}) if not numeric else []
    fig = Figure(figsize=(7.5, 2.6), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    counts: dict[tuple[str, str], int] = {}
    for v, verdict in values:
        x = float(v) if numeric else float(cats.index(str(v)))
        key = (str(v), verdict)
        k = counts[key] = counts.get(key, 0) + 1
        # fixed offsets (0, +, -, ++, ...) keep equal runs apart without randomness
        y = VERDICTS.index(verdict) + ((k // 2) * (1 if k % 2 else -1)) * 0.06
        ax.scatter([x], [y], s=36, color=COLORS.get(verdict, "#555555"), alpha=0.8, edgecolors="none")
    if numeric:
        positive = [float(v) for v, _ in values if float(v) > 0]
        if len(positive) == len(values) and positive and max(positive) / min(positive) > 100:
            ax.set_xscale("log")
            cut = math.sqrt(float(split.low) * float(split.high))
        else:
            cut = (float(split.low) + float(split.high)) / 2
        ax.axvline(cut, color="#444", linestyle=":", linewidth=1)
    else:
        ax.set_xticks(range(len(cats)), [label(c) for c in cats])
    ax.set_yticks(range(len(VERDICTS)), list(VERDICTS))
    ax.set_ylim(-0.6, len(VERDICTS) - 0.4)
    ax.set_xlabel(label(split.parameter))
    ax.set_title(label(split.label()), fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


"""``--format html``: one self-contained HTML file for postmortems and sharing.

A summary table across runs, then per run: verdict, findings, ranked causes with evidence
and fixes, the run's annotated overview figure (reward, KL and every metric an incident
touches; a palette PNG data URI, so the file needs nothing else), the rules
that could not run and the metrics they miss, the run's config, a few text samples, and
the reader's warnings; read errors close the page.

Every string that came from a log passes through :func:`escape.html_text` (``html.escape``
with quotes) and nothing from a log is ever placed in a URL, an id or a script; the page
also declares a Content-Security-Policy that forbids scripts altogether, as a second wall.
"""

from __future__ import annotations

import logging
import re

from .._version import __version__
from ..results import Report, RunReport, register_notebook_html
from . import RenderOptions
from .escape import fmt_num, html_text as e, prose, step_span
from .summary import TOP_CAUSES, cost_line, ordered_findings, severity_counts, split_not_applicable, verdict_line, verdict_tally

log = logging.getLogger(__name__)

MAX_SAMPLES = 5
MAX_SAMPLE_CHARS = 2000
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1180px;padding:16px 24px;color:#1d1d1f}
h1{font-size:22px;margin:8px 0}h2{font-size:19px;margin:28px 0 6px;padding-top:8px;border-top:2px solid #ddd}
h3{font-size:15px;margin:16px 0 6px}table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border:1px solid #ddd;padding:4px 7px;text-align:left;vertical-align:top}th{background:#f4f4f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#666}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-weight:600;font-size:12px;color:#fff}
.healthy{background:#2e7d32}.unhealthy{background:#c62828}.unknown{background:#b26a00}
.sev-error{color:#c62828;font-weight:600}.sev-warning{color:#b26a00;font-weight:600}.sev-info{color:#00838f}
.verdict{font-size:15px;font-weight:600;margin:4px 0}.cause{margin:6px 0 10px}.cause ul{margin:2px 0}
img.plot{max-width:100%;border:1px solid #eee;margin:6px 0}pre{white-space:pre-wrap;background:#f7f7f9;padding:6px 8px;border-radius:4px}
code{background:#f1f1f4;padding:0 3px;border-radius:3px}details{margin:6px 0}
"""


_CODE_SPAN = re.compile(r"`([^`]+)`")


def t(value: object) -> str:
    """Prose (a message, a fix, a cause's text) as markup: escaped, RST literals and
    Markdown's `x` shown as ``<code>`` (the span's content is already escaped)."""
    return _CODE_SPAN.sub(r"<code>\1</code>", e(prose(str(value))))


def _table(header: list[str], rows: list[list[str]], numeric: frozenset[int] = frozenset()) -> str:
    """An HTML table; cells must already be escaped markup."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _badge(verdict: str) -> str:
    return f'<span class="badge {e(verdict)}">{e(verdict)}</span>'


def _summary(report: Report) -> str:
    rows = []
    for i, rr in enumerate(report.runs, 1):
        rng = rr.run.frame.step_range()
        rows.append(
            [
                f'<a href="#run-{i}">{e(rr.run.id)}</a>',
                _badge(rr.verdict),
                e(", ".join(rr.symptoms)) or "-",
                e(severity_counts(rr)) or "-",
                e(rr.causes[0].title) if rr.causes else "-",
                "-" if rng is None else f"{rng[0]}-{rng[1]}",
            ]
        )
    return _table(["run", "verdict", "symptoms", "findings", "top cause", "steps"], rows)


def _findings(rr: RunReport) -> str:
    rows = [
        [
            f'<span class="sev-{e(f.severity)}">{e(f.severity)}</span>',
            f"<code>{e(f.code)}</code> {e(f.name)}",
            e(f.symptom),
            f"<code>{e(f.metric)}</code>",
            "-" if f.start_step is None else str(f.start_step),
            step_span(f.start_step, f.end_step),
            "-" if f.peak_step is None else str(f.peak_step),
            t(f.message),
        ]
        for f in ordered_findings(rr)
    ]
    return "<h3>Findings</h3>" + _table(["severity", "rule", "symptom", "metric", "onset", "steps", "peak step", "message"], rows, frozenset({4, 6}))


def _causes(rr: RunReport) -> str:
    parts = ["<h3>Likely causes and fixes</h3>"]
    for i, c in enumerate(rr.causes, 1):
        evidence = "".join(f"<li>because {t(x)}</li>" for x in c.evidence)
        evidence += "".join(f"<li>config: {t(x)}</li>" for x in c.config_evidence)
        evidence += "".join(f"<li>against: {t(x)}</li>" for x in c.config_against)
        fixes = "".join(f"<li><b>try:</b> {t(x)}</li>" for x in c.fixes)
        explanation = f"<div class=muted>{t(c.explanation)}</div>" if c.explanation else ""
        block = (
            f'<div class="cause"><b>{i}. {e(c.title)}</b> <code>{e(c.id)}</code> '
            f"confidence {fmt_num(c.confidence, 2)}{explanation}<ul>{evidence}{fixes}</ul></div>"
        )
        if i == TOP_CAUSES + 1:
            parts.append(f"<details><summary>{len(rr.causes) - TOP_CAUSES} less likely cause(s)</summary>")
        parts.append(block)
    if len(rr.causes) > TOP_CAUSES:
        parts.append("</details>")
    return "".join(parts)


def _plots(rr: RunReport) -> str:
    """The run's overview figure, and how to draw every other metric."""
    from .plots import plot_specs, png_data_uris

    imgs = [
        f'<img class="plot" alt="{e(rr.run.id)}: {e(spec.title)}" src="{uri}">'
        for spec, uri in png_data_uris(rr)
    ]
    if not imgs:
        return ""
    every = {m for spec in plot_specs(rr) for m in spec.metrics}
    note = (
        f'<p class="muted">Reward, KL and the metrics of the incidents; '
        f"<code>ppo-doctor plot {e(rr.run.path)}</code> draws all {len(every)} plotted metrics.</p>"
    )
    return "<h3>Plots</h3>" + "".join(imgs) + note


def _not_applicable(rr: RunReport) -> str:
    lacking, by_design = split_not_applicable(rr)
    out = "<h3>Rules that could not run</h3>" + "".join(f"<p>{t(why)}</p>" for why in by_design)
    if not lacking:
        return out
    rows = [[f"<code>{e(n.code)}</code>", e(n.name), e(", ".join(n.missing))] for n in lacking]
    missing = sorted({m for n in lacking for m in n.missing})
    summary = f"{len(rows)} rule(s) could not run; missing: {e(', '.join(missing))}"
    return out + f"<details><summary>{summary}</summary>" + _table(["rule", "name", "missing metrics"], rows) + "</details>"


def _config(rr: RunReport) -> str:
    rows = [[f"<code>{e(k)}</code>", e(v)] for k, v in sorted(rr.run.config.items(), key=lambda kv: str(kv[0]))]
    return f"<details><summary>Config ({len(rows)} values)</summary>" + _table(["key", "value"], rows) + "</details>"


def _samples(rr: RunReport) -> str:
    items = []
    for t in rr.run.texts[:MAX_SAMPLES]:
        reward = "" if t.reward is None else f", reward {fmt_num(t.reward)}"
        prompt = f"<pre>{e(t.prompt[:MAX_SAMPLE_CHARS], keep_newlines=True)}</pre>" if t.prompt else ""
        items.append(
            f"<p>step {t.step} <code>{e(t.tag)}</code>{reward}</p>{prompt}"
            f"<pre>{e(t.text[:MAX_SAMPLE_CHARS], keep_newlines=True)}</pre>"
        )
    return f"<details><summary>Text samples ({len(rr.run.texts)})</summary>" + "".join(items) + "</details>"


def _run(index: int, rr: RunReport, options: RenderOptions) -> str:
    run = rr.run
    rng = run.frame.step_range()
    steps = "no steps" if rng is None else f"steps {rng[0]}-{rng[1]}"
    parts = [
        f'<h2 id="run-{index}">{e(run.id)} {_badge(rr.verdict)}</h2>',
        f'<div class="verdict">{e(verdict_line(rr, findings_listed=True))}</div>',
        f'<div class="muted">{e(run.path)} &middot; {e(run.framework)} &middot; {e(run.format)} &middot; '
        f"{steps} &middot; {len(run.frame)} points &middot; {len(run.files)} file(s)</div>",
    ]
    if rr.findings:
        parts.append(_findings(rr))
    if rr.cost is not None:
        parts.append(f"<p>{e(cost_line(rr.cost))}</p>")
    if rr.causes:
        parts.append(_causes(rr))
    if options.plots:
        parts.append(_plots(rr))
    if rr.not_applicable:
        parts.append(_not_applicable(rr))
    if run.config:
        parts.append(_config(rr))
    if run.texts:
        parts.append(_samples(rr))
    if run.warnings:
        parts.append("<h3>Reader warnings</h3><ul>" + "".join(f"<li>{e(w)}</li>" for w in run.warnings) + "</ul>")
    return "\n".join(parts)


def _body(report: Report, options: RenderOptions) -> list[str]:
    tally = verdict_tally(report)
    body = [f'<p class="muted">ppo-doctor {e(__version__)}: {len(report.runs)} run(s)' + (f" ({e(tally)})" if tally else "") + "</p>"]
    if report.runs:
        body.append(_summary(report))
    body += [_run(i, rr, options) for i, rr in enumerate(report.runs, 1)]
    if report.errors:
        rows = [[e(x.level), e(x.path), "-" if x.offset is None else str(x.offset), e(x.message)] for x in report.errors]
        body.append("<h2>Read problems</h2>" + _table(["level", "file", "byte offset", "message"], rows, frozenset({2})))
    return body


def render(report: Report, options: RenderOptions) -> str:
    """The whole page."""
    body = ["<h1>ppo-doctor report</h1>", *_body(report, options)]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ppo-doctor report</title><style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


FRAGMENT_CLASS = "ppo-doctor"


def _scoped_css() -> str:
    """:data:`CSS` with every selector under ``.ppo-doctor`` (``body`` becomes the wrapper), so
    a notebook page keeps its own styles."""
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", CSS)
    out = []
    for selectors, decl in rules:
        scoped = [
            f".{FRAGMENT_CLASS}" if sel.strip() == "body" else f".{FRAGMENT_CLASS} {sel.strip()}"
            for sel in selectors.split(",")
        ]
        out.append(",".join(scoped) + "{" + decl + "}")
    return "".join(out)


def fragment(report: Report) -> str:
    """The report as an HTML fragment for Jupyter's ``_repr_html_``: summary, findings,
    causes, without plots (drawing them is ``render(report, "html")``'s slow part)."""
    body = _body(report, RenderOptions(plots=False))
    return f'<div class="{FRAGMENT_CLASS}"><style>{_scoped_css()}</style>' + "\n".join(body) + "</div>"


register_notebook_html(fragment)

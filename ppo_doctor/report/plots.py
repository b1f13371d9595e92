"""Annotated metric plots for postmortems (``ppo-doctor plot`` and the HTML report).

One figure per metric group per run, one panel per metric.  Each panel shows the raw points
(thin line, dots when few) under a debiased EMA, incidents shaded over their steps and
labelled with the rule code, the onset as a dashed line, NaN/Inf points as red crosses at
the axis edge (they cannot be drawn at their value), an optional healthy baseline in grey,
and a log axis when positive values span more than 2.5 decades.  An incident is drawn on
its own metric's panel and, lighter, on the panels of the other metrics its rule reads
(``Rule.requires``): reward hacking (PD202, judged on the KL) shows on the reward too.

The HTML report embeds one *overview* figure per run (:func:`overview_spec`): reward, KL and
every metric an incident touches, drawn smaller and saved as a 64-colour palette PNG
(:data:`HTML_STYLE`), which made 30 runs 6x smaller and about 3x faster to write
(benchmarks/RESULTS.md, ``bench_html``); ``ppo-doctor plot`` still draws every group.

matplotlib is imported here and only here (never on the ``check`` path); figures are built
with :class:`matplotlib.figure.Figure`, which needs no pyplot global state and renders with
the Agg canvas.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import io
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, MaxNLocator

from ..results import Finding, Report, RunReport
from ..run import Run
from .escape import plain

log = logging.getLogger(__name__)

# Groups follow the guides' metrics to watch (docs/sources.md#guides): reward, KL,
# losses, value function, gradients, entropy and generated length.
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "reward": ("Reward", ("reward/score", "reward/total", "reward/kl_penalty", "reward/std")),
    "kl": ("KL and trust region", ("kl/ref", "kl/coef", "kl/old", "policy/clipfrac", "policy/ratio_mean")),
    "losses": ("Losses", ("loss/policy", "loss/value", "loss/total", "loss/entropy")),
    "value": ("Value function", ("value/explained_var", "value/error", "value/mean", "return/mean", "adv/mean", "adv/std")),
    "gradients": ("Gradients and learning rate", ("grad/norm", "grad/norm_critic", "opt/lr")),
    "entropy_length": ("Entropy and response length", ("policy/entropy", "len/response_mean", "len/response_clip_ratio")),
}
OTHER = "other"
NONFINITE_LABEL = "NaN/Inf"
FORMATS = ("png", "svg", "pdf")
OVERVIEW = "overview"
# the panels every overview starts with: the first metric present of each tuple
OVERVIEW_CORE = (("reward/score", "reward/total"), ("kl/ref",))

SEVERITY_COLOR = {"error": "#d62728", "warning": "#ff7f0e", "info": "#17becf"}
SERIES_COLOR = "#1f5fa8"
BASELINE_COLOR = "#8c8c8c"
LOG_DECADES = 2.5  # log y-axis when positive values span more than this many decades
FLAT_SPAN = 1e-4  # a series varying by less than this share of its size is drawn flat
MARKER_LIMIT = 400  # raw points drawn as dots only when a series is this short
HEADER_IN, FOOTER_IN = 0.75, 0.5  # title and legend above, x label below
MARGIN_LEFT_IN, MARGIN_RIGHT_IN = 0.9, 0.25
TITLE_CHARS = 120  # a long run id must not run off the figure
DPI = 100


@dataclass(frozen=True)
class Style:
    """Figure size and encoding: the ``plot`` command's and the HTML report's."""

    width: float = 11.0  # inches
    panel_height: float = 2.3  # inches per metric panel
    dpi: int = DPI
    palette: int | None = None  # colours of a palette PNG; None: full RGBA
    max_yticks: int | None = None  # cap on major y ticks (None: matplotlib's default)


PLOT_STYLE = Style()
# Measured on the sample logs (bench_html): dpi 80 and a 64-colour palette keep every line,
# shade and label legible at the page's 1180 px width; each figure is about a third of the
# bytes and a tick-capped panel about half the drawing time of the plot command's.
HTML_STYLE = Style(width=10.0, panel_height=1.75, dpi=80, palette=64, max_yticks=4)


@dataclass
class PlotSpec:
    """One figure to draw: a run, a group key and title, and the metrics in panel order."""

    run_report: RunReport
    group: str
    title: str
    metrics: list[str]


# e**EMA_CHUNK_EXP bounds the rescaling factor w**-k inside one block of :func:`ema` (float64
# holds e**709; 30 leaves the cumulative sum about 13 exact digits of head-room)
EMA_CHUNK_EXP = 30.0


def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard-style debiased exponential moving average (values must be finite).

    ``s_t = w s_{t-1} + (1 - w) x_t`` from ``s_{-1} = 0``, divided by ``1 - w**(t+1)`` (the
    same recursion as TensorBoard's smoothing).  Solved in numpy, without a Python loop or
    scipy's ``lfilter``: in a block starting at ``t0``, ``s_t = w**(t-t0+1) s_{t0-1} +
    (1 - w) w**(t-t0) sum_k x_k w**-(k-t0)``, one ``cumsum`` per block; blocks are short
    enough that ``w**-k`` stays below ``e**EMA_CHUNK_EXP``.
    """
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0 or weight <= 0.0:
        return x.copy()
    if weight >= 1.0:
        raise ValueError(f"EMA weight must be below 1, got {weight}")
    block = max(1, int(EMA_CHUNK_EXP / -np.log(weight)))
    out = np.empty(n, dtype=np.float64)
    prev = 0.0
    for t0 in range(0, n, block):
        chunk = x[t0 : t0 + block]
        k = np.arange(len(chunk), dtype=np.float64)
        grow = weight**k  # w**(t - t0)
        sums = np.cumsum(chunk / grow)
        out[t0 : t0 + len(chunk)] = weight * grow * prev + (1.0 - weight) * grow * sums
        prev = float(out[t0 + len(chunk) - 1])
    return out / (1.0 - weight ** np.arange(1, n + 1, dtype=np.float64))


def smoothing_weight(n: int) -> float:
    """EMA weight giving an effective window of about n/40 points (at least 1)."""
    span = max(1.0, n / 40.0)
    return 1.0 - 2.0 / (span + 1.0)


def wants_log_scale(values: np.ndarray) -> bool:
    """True when every finite value is positive and they span > ``LOG_DECADES`` decades.

    From 20 points on the span starts at the 5th percentile: a KL whose first point is 3e-7
    (policy = reference at step 0) and which then runs at 5-40 is read on a linear axis, not
    squeezed into the top of eight decades (corpus: trl-ppo-gpt2-kl-sweep).
    """
    finite = values[np.isfinite(values)]
    if len(finite) < 2 or finite.min() <= 0:
        return False
    low = float(np.percentile(finite, 5)) if len(finite) >= 20 else float(finite.min())
    return float(np.log10(finite.max() / low)) > LOG_DECADES


def resolve_metrics(run: Run, names: Iterable[str]) -> list[str]:
    """``names`` as the frame's metric names: a raw tag that was mapped becomes its canonical
    name (``objective/kl`` -> ``kl/ref``); names the run does not have are dropped."""
    canonical = dict(run.mapping)
    out = []
    for name in names:
        metric = name if run.frame.has(name) else canonical.get(name, name)
        if run.frame.has(metric) and metric not in out:
            out.append(metric)
    return out


def plot_specs(rr: RunReport, metrics: Iterable[str] | None = None) -> list[PlotSpec]:
    """The figures for one run: each group's present metrics, plus metrics with findings.

    With ``metrics`` only those are drawn (canonical names or raw tags, grouped as usual; a
    metric of no group goes to an "Other metrics" figure).
    """
    frame = rr.run.frame
    wanted = None if metrics is None else resolve_metrics(rr.run, metrics)
    placed: set[str] = set()
    specs = []
    for key, (title, members) in GROUPS.items():
        present = [m for m in members if frame.has(m) and (wanted is None or m in wanted)]
        if present:
            specs.append(PlotSpec(rr, key, title, present))
            placed.update(present)
    extra = wanted if wanted is not None else [f.metric for f in rr.findings]
    rest = [m for m in dict.fromkeys(extra) if m not in placed and frame.has(m)]
    if rest:
        specs.append(PlotSpec(rr, OTHER, "Other metrics", rest))
    return specs


def rule_metrics(f: Finding, run: Run | None = None) -> set[str]:
    """The metrics a finding's rule reads (``Finding.reads``), with the finding's own metric;
    just the latter for a finding no rule made.  An "any of" group counts whole, or, given the
    run, as its first alternative the run logged (the one the rule read)."""

    out = {f.metric}
    for alternatives in f.reads:
        if run is not None:
            alternatives = next(((m,) for m in alternatives if run.frame.has(m)), ())
        out.update(alternatives)
    return out


def overview_spec(rr: RunReport) -> PlotSpec | None:
    """One figure for the HTML report: reward and KL, then every metric an incident touches
    (its own and the ones its rule reads), in the groups' order."""
    frame = rr.run.frame
    touched: set[str] = set()
    for f in rr.findings:
        touched |= rule_metrics(f, rr.run)
    core = [next((m for m in alts if frame.has(m)), None) for alts in OVERVIEW_CORE]
    order = [m for _, members in GROUPS.values() for m in members]
    picked = [m for m in core if m] + [m for m in order if m in touched and frame.has(m)]
    picked += sorted(m for m in touched if frame.has(m) and m not in order)
    picked = list(dict.fromkeys(picked))
    return PlotSpec(rr, OVERVIEW, "Overview", picked) if picked else None


def label(text: object) -> str:
    """Log-derived text for a matplotlib label: control chars stripped, ``$`` kept literal.

    An unescaped ``$`` pair would be parsed as mathtext (and a lone one can raise); turning
    mathtext off globally would also break the log-axis tick labels, which use it.
    """
    return plain(text).replace("$", r"\$")


def _label_code(ax: Axes, f: Finding, row: int) -> None:
    if f.start_step is None:
        return
    color = SEVERITY_COLOR[f.severity]
    ax.text(
        f.start_step,
        0.92 - 0.13 * row,
        f" {label(f.code)}",
        transform=ax.get_xaxis_transform(),
        ha="left",
        va="top",
        fontsize=8,
        fontweight="bold",
        color=color,
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": color, "alpha": 0.85},
        zorder=6,
    )


def _incidents(ax: Axes, metric: str, findings: list[Finding]) -> None:
    """Shade this metric's incidents, lighter those of rules that read it; thin dotted
    onsets of the run's other incidents."""
    row = 0
    bands: set[float] = set()
    for f in findings:
        if f.start_step is None:
            continue
        color = SEVERITY_COLOR[f.severity]
        own = f.metric == metric
        if own or metric in rule_metrics(f):
            end = f.end_step if f.end_step is not None else f.start_step
            ax.axvspan(f.start_step, max(end, f.start_step), color=color, alpha=0.13 if own else 0.07, lw=0, zorder=0)
            ax.axvline(f.start_step, color=color, ls="--" if own else "-.", lw=1.2 if own else 0.9, zorder=4)
            _label_code(ax, f, row)
            row += 1
            band = f.band
            if own and band is not None and np.isfinite(band) and band > 0 and band not in bands:
                bands.add(band)  # PD101 and PD202 judge against the same KL band: one line
                # the healthy band the rule judged against (PD101's KL band): what "too high" means
                ax.axhline(band, color=color, ls=":", lw=1.0, zorder=1)
                ax.annotate(f"band {band:g}", (1.0, band), xycoords=("axes fraction", "data"), xytext=(-4, 2),
                            textcoords="offset points", ha="right", va="bottom", fontsize=7, color=color)
        else:
            ax.axvline(f.start_step, color=color, ls=":", lw=0.8, alpha=0.45, zorder=1)


def _nonfinite(ax: Axes, steps: np.ndarray, values: np.ndarray) -> None:
    """Red crosses on the top edge (NaN, +Inf) or bottom edge (-Inf) of the panel."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    edge = np.where(np.isneginf(values[bad]), 0.0, 1.0)
    ax.scatter(
        steps[bad],
        edge,
        marker="x",
        s=28,
        color="red",
        linewidths=1.4,
        transform=ax.get_xaxis_transform(),
        clip_on=False,
        zorder=7,
        label=NONFINITE_LABEL,
    )


def _series(ax: Axes, steps: np.ndarray, values: np.ndarray, color: str, label: str, *, baseline: bool = False) -> None:
    ok = np.isfinite(values)
    x, y = steps[ok], values[ok]
    if len(x) == 0:
        return
    raw_kw: dict[str, Any] = {"color": color, "lw": 0.7, "alpha": 0.35 if not baseline else 0.25, "zorder": 2}
    if len(x) <= MARKER_LIMIT:
        raw_kw.update(marker="o", ms=2.2)
    ax.plot(x, y, label=f"{label} (raw)" if not baseline else None, **raw_kw)
    if len(x) >= 3:
        ax.plot(x, ema(y, smoothing_weight(len(x))), color=color, lw=1.7, ls="--" if baseline else "-", label=f"{label} (EMA)", zorder=3)


def _flat_stays_flat(ax: Axes, values: np.ndarray) -> None:
    """Draw a series that varies by less than ``FLAT_SPAN`` of its size as the flat line it is.

    matplotlib zooms into any range and moves the constant into an offset ("1e-7+1.94591"), so
    a frozen entropy at ln 7 with float-noise wiggles looked like deep dips (corpus:
    tf1-a2c-minigrid-stagnant).  Plain tick labels, and a band of +-5 % around the value.
    """
    ax.ticklabel_format(axis="y", useOffset=False)
    fin = values[np.isfinite(values)]
    if not len(fin):
        return
    lo, hi = float(fin.min()), float(fin.max())
    size = max(abs(lo), abs(hi))
    if 0 < size < np.inf and hi - lo < FLAT_SPAN * size:
        mid = (lo + hi) / 2
        ax.set_ylim(mid - 0.05 * size, mid + 0.05 * size)


def _panel(ax: Axes, spec: PlotSpec, metric: str, baseline: Run | None, style: Style) -> None:
    run = spec.run_report.run
    s = run.frame.series(metric)
    steps, values = s.index.to_numpy(dtype=np.int64), s.to_numpy(dtype=np.float64)
    if baseline is not None and baseline.frame.has(metric):
        b = baseline.frame.series(metric)
        _series(ax, b.index.to_numpy(dtype=np.int64), b.to_numpy(dtype=np.float64), BASELINE_COLOR, f"baseline {label(baseline.id)}", baseline=True)
    _series(ax, steps, values, SERIES_COLOR, "run")
    both = values if baseline is None or not baseline.frame.has(metric) else np.concatenate([values, baseline.frame.series(metric).to_numpy()])
    if wants_log_scale(both):
        ax.set_yscale("log")
    else:
        _flat_stays_flat(ax, both)
    _incidents(ax, metric, spec.run_report.findings)
    _nonfinite(ax, steps, values)
    if not np.isfinite(values).any():
        ax.text(0.5, 0.5, "no finite value", transform=ax.transAxes, ha="center", va="center", color="red")
    bad = int((~np.isfinite(values)).sum())
    ax.set_ylabel(label(metric) + (f"\n({bad} NaN/Inf)" if bad else ""), fontsize=9)
    ax.grid(True, alpha=0.25)
    ax.tick_params(labelsize=8)
    if style.max_yticks is not None:
        # each tick is a Tick object (two lines, a label, a grid line): most of a panel's
        # drawing time; a log axis's minor ticks alone were a tenth of an HTML report's
        ax.yaxis.set_major_locator(LogLocator(numticks=style.max_yticks) if ax.get_yscale() == "log" else MaxNLocator(nbins=style.max_yticks))
        ax.minorticks_off()


def _legend(fig: Figure, axes: Iterable[Axes], height: float, width: float) -> None:
    """One legend for the figure, above the first panel, so no panel's data or incident
    labels hide behind it."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(text, handle)
    if entries:
        fig.legend(
            list(entries.values()),
            list(entries),
            loc="lower right",
            bbox_to_anchor=(1 - MARGIN_RIGHT_IN / width, 1 - HEADER_IN / height),
            ncol=len(entries),
            fontsize=8,
            frameon=False,
        )


def draw(spec: PlotSpec, baseline: Run | None = None, style: Style = PLOT_STYLE) -> Figure:
    """The figure for ``spec`` (not saved)."""
    rr = spec.run_report
    n = len(spec.metrics)
    width = style.width
    height = HEADER_IN + FOOTER_IN + style.panel_height * n
    fig = Figure(figsize=(width, height), dpi=style.dpi)
    # fixed margins in inches: a layout engine (constrained/tight) measures every text
    # artist on each save and doubled the drawing time of a report
    fig.subplots_adjust(
        left=MARGIN_LEFT_IN / width,
        right=1 - MARGIN_RIGHT_IN / width,
        top=1 - HEADER_IN / height,
        bottom=FOOTER_IN / height,
        hspace=0.12,
    )
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for ax, metric in zip(axes, spec.metrics):
        _panel(ax, spec, metric, baseline, style)
    axes[-1].set_xlabel("step")
    codes = sorted({f.code for f in rr.findings if rule_metrics(f) & set(spec.metrics)})
    verdict = rr.verdict.upper() + (f" ({', '.join(codes)})" if codes else "")
    title = f"{label(rr.run.id)}: {spec.title} | {label(verdict)}"
    short = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 3] + "..."
    fig.suptitle(short, y=1 - 0.12 / height, va="top", fontsize=11, fontweight="bold")
    _legend(fig, axes, height, width)
    return fig


def _slug(text: str) -> str:
    """A file-name-safe, collision-resistant name for a run id from an untrusted log."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "run"
    return f"{safe}-{hashlib.sha1(text.encode('utf-8', 'replace')).hexdigest()[:6]}"


def save(fig: Figure, target: Path | io.BytesIO, fmt: str, style: Style = PLOT_STYLE) -> None:
    """Write ``fig`` to a path or a buffer in ``fmt`` (a palette PNG when the style says so)."""
    if fmt != "png" or style.palette is None:
        fig.savefig(target, format=fmt, dpi=style.dpi)
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image  # matplotlib's own dependency: its Agg PNG writer uses it

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    width, height = canvas.get_width_height()
    image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    # fast octree quantisation: anti-aliased lines and shades keep their look in 64 colours
    image.quantize(colors=style.palette, method=Image.Quantize.FASTOCTREE).save(target, format="png")


def plot_report(
    report: Report,
    out_dir: str | Path,
    *,
    fmt: str = "png",
    metrics: Iterable[str] | None = None,
    baseline: Run | None = None,
) -> list[Path]:
    """Write every run's figures to ``out_dir`` and return their paths.

    A figure never replaces one of the runs' own files (``OSError`` naming it), and is written
    beside its name and renamed onto it (:func:`_write_new`), so a link in ``out_dir`` named like a
    figure is replaced, never written through (issue 39: a link to the run's log had that log
    replaced by a PNG; one pointing outside the folder overwrote that file)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown plot format {fmt!r}; choose from {', '.join(FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    real_out = os.path.realpath(out)
    inputs = {os.path.realpath(f) for rr in report.runs for f in rr.run.files}
    metrics = list(metrics) if metrics is not None else None
    paths = []
    for rr in report.runs:
        for spec in plot_specs(rr, metrics):
            name = f"{_slug(rr.run.id)}__{spec.group}.{fmt}"
            if os.path.join(real_out, name) in inputs:
                raise FileExistsError(errno.EEXIST, "is one of the files the report was read from: not replaced", str(out / name))
            buf = io.BytesIO()
            save(draw(spec, baseline), buf, fmt)
            _write_new(out / name, buf.getvalue())
            paths.append(out / name)
    return paths


def _write_new(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` without following a link there: written to a new file of its
    own beside it (``mkstemp`` creates it exclusively), then renamed onto the name, which replaces
    the directory entry, link or file, and never what a link points to (POSIX ``rename``)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def png_data_uris(rr: RunReport, baseline: Run | None = None) -> Iterator[tuple[PlotSpec, str]]:
    """``(spec, "data:image/png;base64,...")`` of the run's overview figure (HTML embedding)."""
    spec = overview_spec(rr)
    if spec is None:
        return
    buf = io.BytesIO()
    save(draw(spec, baseline, HTML_STYLE), buf, "png", HTML_STYLE)
    yield spec, "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")

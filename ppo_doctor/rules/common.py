"""Helpers shared by the rules: unit-aware metric views, run classification, windows and the
construction of incident findings with onset / threshold / peak / end steps.

Rules judge a value only in the units it was logged in (DESIGN.md "Canonical metrics"):
:func:`kl_view` squares trlx's square-root KL and picks the healthy band that matches the
reduction (sequence sum vs token mean); :func:`entropy_view` undoes SB3's negated
``entropy_loss`` and turns TRL's sequence-summed entropy into a per-token one when the
response length is logged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ..detect import Span, TrendSummary, finite_xy, onset, summarize
from ..results import Finding
from ..frameworks import GRPO_FRAMEWORKS, Domain, domain
from ..hparams import scalar_float
from ..run import Run
from .base import Rule, RuleContext
from .inputs import early_late, metric_sign
from .messages import fmt_num

# TRL docs / Training FAQ: objective/kl (a sum over response tokens) should stay in 0-10 nats.
SEQ_KL_BAND = 10.0
# Per-token equivalent: PTT's hard KL cap (0.3) for token-mean KLs, which is also TRL's 10 nats
# spread over the FAQ's recommended max_new_tokens=32 (10/32 = 0.31) (thresholds-and-peers.md §1.2, §4.1).
TOKEN_KL_BAND = 0.3


# -- run classification --------------------------------------------------------------------
def framework(run: Run) -> str:
    """The run's framework id in lower case (``ppo_doctor.frameworks.FRAMEWORKS``), "unknown" if unset."""
    return (run.framework or "unknown").lower()


def is_classic_rl(run: Run) -> bool:
    """A classic-RL run (SB3/CleanRL/baselines): rules about a reference model do not apply."""
    return run_domain(run) == "classic"


def is_grpo(run: Run) -> bool:
    """A GRPO run, whose KL term is off by default (beta = 0 in TRL since 0.19)."""
    return framework(run) in GRPO_FRAMEWORKS


def is_llm_rl(run: Run) -> bool:
    """An LLM RL run (RLHF PPO, GRPO, ...): a known LLM framework, LLM-only metrics, or texts."""
    return run_domain(run) == "llm"


def run_domain(run: Run) -> Domain:
    """The run's :func:`ppo_doctor.frameworks.domain`, from its framework id, metrics and texts."""
    return domain(run.framework, run.frame.has, texts=bool(run.texts))


def cfg_value(run: Run, *keys: str) -> Any:
    """The first of ``keys`` present in the run's canonical config (None when absent)."""
    for k in keys:
        if k in run.config and run.config[k] is not None:
            return run.config[k]
    return None


def cfg_float(run: Run, *keys: str) -> float | None:
    """A numeric config value; strings such as ``"1e-5"`` are parsed, booleans are not numbers."""
    return scalar_float(cfg_value(run, *keys))


def cfg_int(run: Run, *keys: str) -> int | None:
    """A config value as an integer (rounded), or None."""
    f = cfg_float(run, *keys)
    return None if f is None else int(round(f))


# -- gradient clipping ---------------------------------------------------------------------
# PTT's "explode" factor for a gradient norm against its early baseline (PD602 uses it too).
EXPLODE_FACTOR = 10.0
# Support an over-large update (PD801-PD803) or a non-finite value (PD601) lends
# no-grad-clipping when nothing clipped an exploded gradient: the catalog's mechanism, "a
# single bad batch produces a huge update ... and can diverge to NaN".
UNCLIPPED_UPDATE_WEIGHT = 0.7


def clipping_off(run: Run) -> bool:
    """The config turns gradient clipping off: ``max_grad_norm`` written as None, or <= 0."""
    if "max_grad_norm" in run.config and run.config["max_grad_norm"] is None:
        return True
    mgn = cfg_float(run, "max_grad_norm")
    return mgn is not None and mgn <= 0


def unclipped_explosion(ctx: RuleContext, min_points: int = 10) -> str | None:
    """Evidence text when clipping is off and the (pre-clip) ``grad/norm`` exploded, else None.

    Exploded: its largest value is at least :data:`EXPLODE_FACTOR` times the median of the
    first 10 % of the run.  Then every over-large update of the run may be that gradient,
    applied whole.
    """
    if not clipping_off(ctx.run) or not ctx.has("grad/norm"):
        return None
    _, g = ctx.finite("grad/norm")
    if len(g) < min_points:
        return None
    base, _, _ = early_late(g)
    peak = float(np.max(g))
    if not base > 0 or peak < EXPLODE_FACTOR * base:
        return None
    return f"config: gradient clipping off, and grad/norm reached {fmt_num(peak / base)}x its early level: nothing bounded these updates"


def unclipped_causes(ctx: RuleContext, causes: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """``causes`` with no-grad-clipping added when nothing clipped an exploded gradient, and
    the evidence saying so (for findings that such a gradient explains)."""
    note = unclipped_explosion(ctx)
    if note is None:
        return dict(causes), []
    # the unbounded gradient explains the finding at least as well as any cause the rule names
    # by itself (a learning rate too high is then one of two explanations, not the better one)
    weight = max([causes.get("no-grad-clipping", 0.0), UNCLIPPED_UPDATE_WEIGHT, *causes.values()])
    return {**causes, "no-grad-clipping": weight}, [note]


# -- a weak critic while the policy learns ---------------------------------------------------
# How many noise standard errors of a window median the reward must rise by for "the policy
# learns well" (PD203 and PD202 use 3 for a significant reward change).
LEARNING_RISE = 3.0


# The causes of a metric that could not be computed (NaN, Inf, or no value logged): a bug in the
# loss or the masking first, then steps so large that the numbers overflow (the guides' "NaN"
# section; verl#751, #789). Shared by PD601 and PD604, which see the same failure two ways.
NAN_CAUSES = {"implementation-bug": 0.7, "lr-too-high": 0.5, "reward-not-normalized": 0.3, "no-grad-clipping": 0.3}
# A mean reward that turns non-finite (or stops being logged: TRL's null) before anything the
# update computes does: the reward function's output, not the optimiser (catalog
# ``reward-function-nan``); an update that blew up reaches the loss or the gradients first.
REWARD_NAN_CAUSES = {"reward-function-nan": 1.0, "implementation-bug": 0.4}
REWARD_METRICS = ("reward/score", "reward/total")


# What the update computes from the reward: one of them broken before the reward means the update
# broke first (a NaN model still samples, and its samples are scored).
UPDATE_METRICS = ("loss/policy", "loss/total", "loss/value", "grad/norm", "kl/ref", "kl/old", "policy/entropy")


def reward_nan_causes(ctx: RuleContext, metric: str, first_bad: int, causes: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """``(causes, evidence)`` for a metric that turned non-finite (or stopped) at ``first_bad``:
    :data:`REWARD_NAN_CAUSES` with a sentence saying why when it is the mean reward and nothing the
    update computes broke earlier, else ``causes`` unchanged."""
    if metric not in REWARD_METRICS and metric != "reward/std":
        return causes, []
    for m in UPDATE_METRICS:
        if ctx.has(m):
            s, v = ctx.arrays(m)
            bad = s[~np.isfinite(v)]
            if len(bad) and int(bad[0]) < first_bad:
                return causes, []
    return dict(REWARD_NAN_CAUSES), [
        f"the reward broke at step {first_bad} before any loss, KL or gradient did: the reward function "
        "returned NaN or nothing (TRL logs null, and nothing to TensorBoard, for a reward that is NaN for every sample)"
    ]


def reward_arrays(ctx: RuleContext, min_points: int) -> tuple[str, np.ndarray, np.ndarray] | None:
    """``(metric, steps, values)`` of the mean reward (``reward/score``, else ``reward/total``),
    finite, when it has at least ``min_points`` points; else None.  For rules that read the
    reward beside their own metric."""
    metric = ctx.first_present("reward/score", "reward/total")
    if metric is None:
        return None
    s, v = ctx.finite(metric)
    return (metric, s, v) if len(v) >= min_points else None


def _rising_reward(ctx: RuleContext, min_points: int) -> tuple[TrendSummary, np.ndarray] | None:
    """The reward's trend summary and finite values when it rose clearly (by at least
    :data:`LEARNING_RISE` noise standard errors over at least ``min_points`` points), else None."""
    reward = reward_arrays(ctx, min_points)
    if reward is None:
        return None
    _, s, v = reward
    t = summarize(s, v)
    if not (t.change > 0 and t.change_in_noise >= LEARNING_RISE):
        return None
    return t, v


def learning_despite_critic(ctx: RuleContext, min_points: int = 20) -> str | None:
    """Evidence text when the mean reward rose clearly over the run, else None.

    A critic that explains little of the returns while the reward rises well is a note, not a
    symptom (value rules PD403 and PD405 then report at info level, as PD702 does for answers
    that got shorter but are more than EOS): the policy learns
    regardless, and once a task is solved the returns sit at a cap, where they have almost no
    variance left to explain (explained variance = 1 - Var(returns - values) / Var(returns)).
    """
    rising = _rising_reward(ctx, min_points)
    if rising is None:
        return None
    t, _ = rising
    return f"the reward rose {fmt_num(t.first)} -> {fmt_num(t.last)} ({fmt_num(t.change_in_noise)} noise s.e.): the policy learns despite the critic"


# A reward that kept this share of its way up to its 95th percentile ends "at the top": a noisy
# bounded reward (accuracy over a small batch) wanders below its best points by chance.
TOP_SHARE = 0.8


def solved(ctx: RuleContext, min_points: int = 20) -> str | None:
    """Evidence text when the reward rose clearly and its last window sits at the top of the run's
    range (within two standard errors of its 95th percentile, or at least :data:`TOP_SHARE` of
    the way from its first window to it), else None: a task the policy solved, where becoming
    confident (lower entropy) is what learning looks like."""
    rising = _rising_reward(ctx, min_points)
    if rising is None:
        return None
    t, v = rising
    se = t.noise * math.sqrt(2.0 / max(1, t.window))
    top = float(np.percentile(v, 95))
    if not (t.last >= top - 2 * se or t.last - t.first >= TOP_SHARE * (top - t.first)):
        return None
    return f"the reward rose {fmt_num(t.first)} -> {fmt_num(t.last)} and ends at the top of its range: the policy solved its task"


# Counters that a trainer resets at the start of each training call while the step axis goes on:
# SB3's ``time/iterations`` is a local of ``OnPolicyAlgorithm.learn`` (``iteration = 0``, logged by
# ``_dump_logs``), so a second ``learn(..., reset_num_timesteps=False)`` restarts it at 1 while
# ``time/total_timesteps``, the step, continues.  Curricula and environment swaps are written so
# (``model.set_env(harder); model.learn(...)``).
PHASE_COUNTERS = ("time/iterations",)


def phase_starts(ctx: RuleContext) -> list[int]:
    """Steps where a new training call began on a continuing step axis: a phase counter
    (:data:`PHASE_COUNTERS`) fell back.  What the reward measures may change there."""
    out: list[int] = []
    for metric in PHASE_COUNTERS:
        if ctx.has(metric):
            s, v = finite_xy(*ctx.arrays(metric))
            out += [int(x) for x in s[1:][np.diff(v) < 0]]
    return sorted(set(out))


# -- series access ----------------------------------------------------------------------
def sustain_window(n: int, lo: int = 3, hi: int = 20, share: float = 0.6) -> tuple[int, int]:
    """(k, window) for "k of window consecutive points": 5 % of the run, 3..20 points, 60 % of it.

    The share follows PTT's windowed conditions and rlwatch's consecutive-step counters
    (thresholds-and-peers.md §1.2): one noisy point is never an incident.
    """
    w = max(lo, min(hi, n // 20))
    return max(1, math.ceil(share * w)), w


# -- KL in its own units -----------------------------------------------------------------
@dataclass
class KLView:
    """The reference KL as judged: values in nats (trlx's square root undone) and its band."""

    metric: str
    steps: np.ndarray
    values: np.ndarray
    reduction: str  # "seq_sum", "token_mean" or "unknown"
    estimator: str | None  # "k1", "k2", "k3", "full", "abs", None (unknown)
    band: float
    note: str

    @property
    def unit(self) -> str:
        return {"seq_sum": "nats per sequence", "token_mean": "nats per token"}.get(self.reduction, "nats")

    @property
    def can_be_negative(self) -> bool:
        """k1 (and an unknown estimator, which defaults to k1 in TRL/OpenRLHF) can dip below 0."""
        return self.estimator in (None, "k1")


def kl_view(ctx: RuleContext, seq_band: float = SEQ_KL_BAND, token_band: float = TOKEN_KL_BAND) -> KLView | None:
    """The ``kl/ref`` series in judged units with the matching healthy band, or None.

    A sequence sum is compared with TRL's 0-10 band, a token mean with the per-token band.
    When the reduction is unknown the sequence band is used (lenient: it never calls a
    healthy per-sequence KL too high) and the note says so.
    """
    if not ctx.has("kl/ref"):
        return None
    steps, values = ctx.finite("kl/ref", signed=False)
    info = ctx.run.metric_info.get("kl/ref")
    estimator = (info.estimator or None) if info else None
    reduction = (info.reduction or "unknown") if info else "unknown"
    notes = []
    if estimator == "sqrt_k3":
        # trlx logs sqrt(KL) (formats.md §4, §8): square it before judging
        values = np.square(values)
        estimator = "k3"
        notes.append("squared from trlx's square-root KL")
    if reduction == "seq_sum":
        band = seq_band
    elif reduction == "token_mean":
        band = token_band
    else:
        band = seq_band
        notes.append("reduction unknown, judged against the sequence-level band")
    return KLView("kl/ref", steps, values, reduction, estimator, band, "; ".join(notes))


def first_kl(view: KLView, first_points: int = 3) -> tuple[float, int]:
    """(lowest KL over the first logged points, how many points): above the band means the
    policy and the reference already differed when logging began.

    The lowest, not the median: a policy initialised from the reference logs about 0 at its
    first rollout, and a learning rate large enough to jump far in one update shows 0 first and
    a high KL only after that update (a blow-up, not a wrong initialisation).
    """
    n_first = max(1, min(int(first_points), len(view.values) // 20 or 1))
    return float(np.min(view.values[:n_first])), n_first


def per_token_kl(ctx: RuleContext, view: KLView) -> float | None:
    """Late per-token KL when a sequence-summed KL and the response length are both logged."""
    if view.reduction != "seq_sum" or not ctx.has("len/response_mean") or len(view.values) == 0:
        return None
    _, length = ctx.finite("len/response_mean")
    if len(length) == 0:
        return None
    _, late_len, _ = early_late(length)
    _, late_kl, _ = early_late(view.values)
    return late_kl / late_len if late_len > 0 else None


def align(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps common to two sorted unique step arrays, with the indices into each.

    Metrics logged together share their steps; that case skips the sort of ``intersect1d``.
    """
    if len(a) == len(b) and np.array_equal(a, b):
        idx = np.arange(len(a))
        return a, idx, idx
    return np.intersect1d(a, b, assume_unique=True, return_indices=True)


# -- entropy in its own units ------------------------------------------------------------
@dataclass
class EntropyView:
    """Policy entropy as judged: sign convention undone, per token when convertible."""

    metric: str
    steps: np.ndarray
    values: np.ndarray  # entropy (sign convention undone), per token when convertible
    note: str


def entropy_view(ctx: RuleContext) -> EntropyView | None:
    """Policy entropy: ``policy/entropy``, else SB3-style ``loss/entropy`` (sign applied).

    SB3 logs ``train/entropy_loss`` = -entropy (formats.md §7); the mapping records it as
    ``sign=-1``, and for an SB3 run without that record the sign is assumed.  TRL's
    ``objective/entropy`` is a sum over the response; divided by the response length when it is
    logged on the same steps, so a shorter answer is not read as a collapse.
    """
    metric = ctx.first_present("policy/entropy", "loss/entropy")
    if metric is None:
        return None
    steps, values = ctx.arrays(metric)
    sign = metric_sign(ctx.run, metric)
    info = ctx.run.metric_info.get(metric)
    if metric == "loss/entropy" and info is None and "sb3" in framework(ctx.run):
        sign = -1
    s, v = finite_xy(steps, values * sign)
    notes = ["sign flipped (logged as -entropy)"] if sign == -1 else []
    if info is not None and info.reduction == "seq_sum" and ctx.has("len/response_mean"):
        ls, lv = ctx.arrays("len/response_mean")
        common, ia, ib = align(s, ls)
        ok = np.isfinite(lv[ib]) & (lv[ib] > 0)
        if ok.sum() >= max(3, len(s) // 2):
            s, v = common[ok], v[ia][ok] / lv[ib][ok]
            notes.append("divided by response length (logged as a sequence sum)")
    return EntropyView(metric, s, v, "; ".join(notes))


# -- building findings -------------------------------------------------------------------
def incident(
    rule: Rule,
    ctx: RuleContext,
    *,
    metric: str,
    steps: np.ndarray,
    values: np.ndarray,
    span: Span,
    direction: str,
    observed: dict[str, float],
    end_step: int | None = None,
    peak_step: int | None = None,
    log_scale: bool = False,
    **kw: Any,
) -> Finding:
    """A finding for an incident that starts at ``span`` (indices into ``steps``/``values``).

    ``threshold_step`` is the span's first step; ``start_step`` its onset (where the series
    departed from its baseline, estimated on the prefix; never after the threshold step);
    messages name both through ``{since}``, so the message and the onset agree;
    ``peak_step`` and ``end_step`` default to the span's.  ``log_scale``: estimate the onset
    on log10 of a positive series (norms and losses blow up multiplicatively, and on a linear
    scale a geometric run-up looks flat until its last few points).
    """
    series = values
    if log_scale:
        with np.errstate(divide="ignore", invalid="ignore"):
            series = np.log10(np.where(values > 0, values, np.nan))
    on = onset(steps, series, span.start_idx, direction)
    threshold_step = span.start_step
    start = min(on.step, threshold_step)
    # messages say "{since}" so that the step they name agrees with the finding's onset
    since = f"from step {threshold_step}" if start == threshold_step else f"from step {threshold_step} (departing from its baseline at step {start})"
    kw["fmt"] = {"since": since, **kw.get("fmt", {})}
    return rule.finding(
        ctx,
        metric=metric,
        observed=observed,
        start_step=int(start),
        threshold_step=int(threshold_step),
        peak_step=int(span.peak_step if peak_step is None else peak_step),
        end_step=int(span.end_step if end_step is None else end_step),
        **kw,
    )


def describe(values: Iterable[Any], limit: int = 5) -> str:
    """A short comma-separated list, with '...' after ``limit`` items."""
    items = [str(v) for v in values]
    return ", ".join(items[:limit]) + (", ..." if len(items) > limit else "")


class TextSampleRule(Rule):
    """Base for rules that read ``run.texts``: not applicable when no text samples were logged;
    their findings observe the texts (``Finding.observes``), not a metric."""

    observes = "texts"

    @classmethod
    def missing(cls, run: Run) -> list[str]:
        return super().missing(run) + ([] if run.texts else ["text samples"])

"""PD207 reward-component-gaming."""

from __future__ import annotations

import math
import re
from typing import Iterator, NamedTuple

import numpy as np

from ..canonical.hparams import lookup, parse_scalar, scalar_float
from ..detect import TrendSummary, percentile, summarize, sustained_spans
from ..results import Finding
from ..run import Run
from ..standing import FAIR_SHARE
from .base import Example, Rule, RuleContext, as_trend
from .examples import flat, ramp, saturating
from .incidents import incident, sustain_window
from .messages import fmt_num
from .reward_progress import LEARNING_RISE, TOP_SHARE, trend_arrays

# TRL's ``rewards/<name>/mean``, one per reward function, read as ``reward/fn/<name>/mean``.
COMPONENT = re.compile(r"^reward/fn/(.+)/mean$")
# Words that name the component measuring the task (open-r1's ``accuracy_reward``, the TRL docs'
# ``correctness_reward_func``); a name is split into words at anything but letters and digits.
TASK_WORDS = frozenset({"correct", "correctness", "accuracy", "acc", "accurate"})
# Words that name a component rewarding the answer's form, not its content: open-r1's
# ``format_reward``, ``tag_count_reward``, ``len_reward``; the TRL GRPO tutorials'
# ``xmlcount_reward_func``, ``soft_format_reward_func``, ``strict_format_reward_func``.
FORMAT_WORDS = frozenset({"format", "xml", "xmlcount", "tag", "tags", "keyword", "keywords", "len", "length"})
# The run config's per-function weights: TRL ``GRPOConfig.reward_weights``, in the order of ``reward_funcs``.
WEIGHT_KEYS = ("reward_weights",)


def components(run: Run) -> dict[str, str]:
    """Reward component name -> its canonical metric, in the order the log lists them (TRL logs
    them in the order of ``reward_funcs``, the order of ``reward_weights``)."""
    out: dict[str, str] = {}
    for metric in dict.fromkeys(run.mapping.values()):
        m = COMPONENT.match(metric)
        if m and run.frame.has(metric):
            out[m.group(1)] = metric
    for metric in run.frame.metrics:  # a component the mapping does not list (a DataFrame)
        m = COMPONENT.match(metric)
        if m:
            out.setdefault(m.group(1), metric)
    return out


class Pick(NamedTuple):
    """The task component and why it was picked."""

    name: str
    why: str


class ReachedTop(NamedTuple):
    """A component that rose clearly and ends at the top of its range."""

    name: str
    trend: TrendSummary
    steps: np.ndarray
    values: np.ndarray


class RewardComponentGaming(Rule):
    """One reward component saturates while the component that measures the task stalls or falls.

    **What it detects.** On a run that logs each reward function (TRL ``rewards/<name>/mean``,
    read as ``reward/fn/<name>/mean``), the task component is picked first, and the message says
    which and why:

    1. the one named by the ``task`` parameter (``[tool.ppo-doctor.rules.reward-component-gaming]
       task = "my_reward"``), when set;
    2. else the one whose name holds ``correct``, ``correctness``, ``accuracy``, ``acc`` or
       ``accurate`` as a word (open-r1's ``accuracy_reward``; several: the heaviest, else the
       first);
    3. else the one with the most weight in the run config's ``reward_weights`` (TRL), matched
       to the components in the order the log lists them (TRL logs them in the order of
       ``reward_funcs``, the order of the weights), when there is one weight per component and
       one weight is largest;
    4. else the only component whose name holds no word of the answer's form (``format``,
       ``xml``, ``xmlcount``, ``tag``, ``keyword``, ``len``, ``length``: open-r1's and the TRL
       tutorials' format rewards), when all the others hold one;
    5. else none: a component that saturated while another did not is an info note that says
       how to name the task.

    Then another component **saturates**: it rose clearly (by at least 3 noise standard errors
    of a window median, ``reward_progress.LEARNING_RISE``) and its last window sits at the top
    of its range (``reward_progress.solved``'s test) while the task component **stalls** (no
    such rise: a **warning**) or **falls** (a fall of as many standard errors: an **error**),
    from the step where the saturating component passed halfway up its rise.  When both the easy
    and the task component improve, nothing is said.

    **Why it matters.** The total reward rises because the easy component (format, length, a
    judge's style score) is being maximised, and the total alone hides that the task is not
    learnt: reward hacking of the most common kind in GRPO ("format reward saturates while
    accuracy falls", huggingface/open-r1#255).  Every group's advantages then pay for the
    format, not the answer.

    **Known false positives.** A task component that is hard on purpose and expected to move
    late (a curriculum): the finding is judged only once the run reached its plan; a component
    whose name reads as the task but is not (set ``task``); weights matched to the wrong
    components when a log lists the functions in another order than ``reward_funcs`` (set
    ``task``).

    **Evidence.** A task component that fell decisively (``decisive`` noise standard errors of a
    window median) while another saturated is an event, judged when it holds: the task already got
    worse (issue 41).  Any other finding is a trend: on a live run short of its plan an info note until
    ``fair_share`` of the plan is behind it (:mod:`ppo_doctor.standing`).

    **Source.** huggingface/open-r1#255; TRL ``GRPOTrainer`` per-function ``rewards/<name>/mean``
    (grpo_trainer.py) and ``GRPOConfig.reward_weights`` (grpo_config.py); rlprobe's
    FORMAT_GAMING check; Skalse et al. 2022 (arXiv:2209.13085) (docs/sources.md#reward-component-gaming).
    """

    code = "PD207"
    name = "reward-component-gaming"
    symptom = "reward_hacking"
    severity = "warning"
    # the task component stalling or falling while another saturates is the outcome itself
    basis = "outcome"
    evidence = "event"  # a decisive fall of the task; the rest is a trend, watched in evaluate
    params = {"task": "", "decisive": 10.0, "fair_share": FAIR_SHARE, "min_points": 20}
    causes = {"reward-weights-unbalanced": 1.0, "reward-model-flawed": 0.5, "reward-hacking-length": 0.3}
    message = "reward component {easy} saturated ({easy_first:num} -> {easy_late:num}) {since} {task_part}"

    @classmethod
    def missing(cls, run: Run) -> list[str]:
        return [] if len(components(run)) >= 2 else ["two or more reward/fn/*/mean (one per reward function)"]

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        comps = components(ctx.run)
        configured = ctx.params["task"]
        if configured and configured not in comps:
            return
        pick = _pick(configured, list(comps), _weights(ctx, list(comps)))
        if pick is None:
            yield from self._unjudged(ctx, comps)  # info notes only
            return
        s, v = trend_arrays(ctx, comps[pick.name])
        if len(v) < ctx.params["min_points"]:
            return
        task = summarize(s, v)
        moved = task.change_in_noise >= LEARNING_RISE
        if moved and task.change > 0:
            return  # the task is learnt: an easy component saturating beside it is no harm
        verb = "fell" if moved else "stalled"
        task_part = (
            f"while the task component {pick.name} {verb} ({fmt_num(task.first)} -> {fmt_num(task.last)}); "
            f"task component: {pick.name} ({pick.why})"
        )
        tops = [t for t in (_reached_top(ctx, name, metric) for name, metric in comps.items() if name != pick.name) if t is not None]
        decisive = verb == "fell" and task.change_in_noise >= ctx.params["decisive"]
        for finding in self._saturated(ctx, comps, tops, task_part, "error" if verb == "fell" else "warning"):
            yield finding if decisive else as_trend(ctx, finding)

    def _unjudged(self, ctx: RuleContext, comps: dict[str, str]) -> Iterator[Finding]:
        """No task component: an info note when a component saturated while another did not rise,
        which says how to name the task."""
        tops = [t for t in (_reached_top(ctx, name, metric) for name, metric in comps.items()) if t is not None]
        others = [name for name in comps if name not in {t.name for t in tops}]
        if not tops or not others:
            return
        task_part = (
            f"while {', '.join(others)} did not saturate; no component is known as the task (none is named for "
            "correctness and reward_weights does not single one out): name it with the rule's task parameter to judge it"
        )
        yield from self._saturated(ctx, comps, tops, task_part, "info")

    def _saturated(self, ctx: RuleContext, comps: dict[str, str], tops: list[ReachedTop], task_part: str, severity: str) -> Iterator[Finding]:
        """The finding on the component that rose most clearly to its top, from the step it passed
        halfway up its rise."""
        if not tops:
            return
        easy = max(tops, key=lambda t: t.trend.change_in_noise)
        halfway = easy.trend.first + 0.5 * easy.trend.change
        k, w = sustain_window(ctx.planned_points(len(easy.values)))
        spans = sustained_spans(easy.steps, easy.values >= halfway, k, w, values=easy.values)
        if not spans:
            return
        evidence = [f"{t.name} also saturated ({fmt_num(t.trend.first)} -> {fmt_num(t.trend.last)})" for t in tops if t is not easy]
        evidence += _total(ctx)
        yield incident(
            self,
            ctx,
            metric=comps[easy.name],
            steps=easy.steps,
            values=easy.values,
            span=spans[0],
            direction="up",
            observed={"easy_first": easy.trend.first, "easy_late": easy.trend.last},
            end_step=int(easy.steps[-1]),
            severity=severity,
            evidence=evidence,
            fmt={"easy": easy.name, "task_part": task_part},
        )

    @classmethod
    def bad_example(cls):
        # an easy format reward weighted over a hard correctness reward: format 0.1 -> 1.0, correctness stays at 0.1
        return Example(
            series={
                "reward/fn/format_reward/mean": saturating(120, 0.1, 1.0, rate=6, sd=0.02, seed=81),
                "reward/fn/correctness_reward/mean": flat(120, 0.1, 0.02, seed=82),
                "reward/score": saturating(120, 0.2, 1.1, rate=6, sd=0.03, seed=83),
            },
            config={"reward_weights": [1.0, 0.5]},
            framework="trl_grpo",
        )

    @classmethod
    def good_example(cls):
        # the format is learnt first and the answers follow
        return Example(
            series={
                "reward/fn/format_reward/mean": saturating(120, 0.1, 1.0, rate=6, sd=0.02, seed=84),
                "reward/fn/correctness_reward/mean": ramp(120, 0.1, 0.5, sd=0.02, seed=85, begin=20),
                "reward/score": ramp(120, 0.2, 1.5, sd=0.03, seed=86, begin=10),
            },
            framework="trl_grpo",
        )


def _weights(ctx: RuleContext, names: list[str]) -> dict[str, float] | None:
    """Component -> its weight from the config's ``reward_weights``, matched in logged order;
    None without one finite weight per component."""
    hit = lookup(ctx.run.raw_config, WEIGHT_KEYS) or lookup(ctx.run.config, WEIGHT_KEYS)
    if hit is None:
        return None
    raw = parse_scalar(hit[1])
    if not isinstance(raw, (list, tuple)) or len(raw) != len(names):
        return None
    weights = [scalar_float(w) for w in raw]
    if any(w is None for w in weights):
        return None
    return dict(zip(names, weights))  # type: ignore[arg-type]


def _pick(configured: str, names: list[str], weights: dict[str, float] | None) -> Pick | None:
    """The task component and why (see the rule's docstring), or None."""
    if configured:
        return Pick(configured, "set by the rule's task parameter") if configured in names else None
    named = [n for n in names if TASK_WORDS.intersection(_words(n))]
    if len(named) == 1:
        return Pick(named[0], "its name says it measures correctness")
    if named:
        if weights is not None and _unique_max(weights, named):
            top = max(named, key=lambda n: weights[n])
            return Pick(top, f"its name says it measures correctness, and it weighs most of those that do ({fmt_num(weights[top])})")
        return Pick(named[0], f"the first of {len(named)} components named for correctness")
    if weights is not None and _unique_max(weights, names):
        top = max(names, key=lambda n: weights[n])
        return Pick(top, f"no component is named for correctness; it has the most weight in reward_weights ({fmt_num(weights[top])})")
    content = [n for n in names if not FORMAT_WORDS.intersection(_words(n))]
    if len(content) == 1 and len(names) > 1:
        return Pick(content[0], "the only component not named for the answer's form (format, xml, tags, keywords, length)")
    return None


def _words(name: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", name.lower()))


def _unique_max(weights: dict[str, float], names: list[str]) -> bool:
    vals = sorted((weights[n] for n in names), reverse=True)
    return len(vals) == 1 or vals[0] > vals[1]


def _reached_top(ctx: RuleContext, name: str, metric: str) -> ReachedTop | None:
    """The component when it rose clearly and its last window sits at the top of its range
    (within two standard errors of its 95th percentile, or :data:`TOP_SHARE` of the way to it)."""
    s, v = trend_arrays(ctx, metric)
    if len(v) < ctx.params["min_points"]:
        return None
    t = summarize(s, v)
    if not (t.change > 0 and t.change_in_noise >= LEARNING_RISE):
        return None
    se = t.noise * math.sqrt(2.0 / max(1, t.window))
    top = float(percentile(v, 95))
    if not (t.last >= top - 2 * se or t.last - t.first >= TOP_SHARE * (top - t.first)):
        return None
    return ReachedTop(name, t, s, v)


def _total(ctx: RuleContext) -> list[str]:
    """The total reward's move, which hides the task's."""
    metric = ctx.first_present("reward/score", "reward/total")
    if metric is None:
        return []
    s, v = trend_arrays(ctx, metric)
    if len(v) < ctx.params["min_points"]:
        return []
    t = summarize(s, v)
    if not (t.change > 0 and t.change_in_noise >= LEARNING_RISE):
        return []
    return [f"the total reward ({ctx.view.raw(metric)}) rose {fmt_num(t.first)} -> {fmt_num(t.last)}: the total hides the task"]

"""PD601 non-finite-values."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..detect import NonFinite, median, nonfinite, onset
from .base import Example, Rule, RuleContext
from .clipping import unclipped_causes
from .examples import ramp, saturating
from .incidents import describe
from .nan_causes import NAN_CAUSES, REWARD_METRICS, reward_nan_causes
from .outcome import judge_sign

CANONICAL = frozenset(
    "reward/score reward/total reward/kl_penalty reward/std kl/ref kl/coef kl/old policy/entropy "
    "policy/clipfrac policy/ratio_mean policy/ratio_var loss/policy loss/value loss/total loss/entropy "
    "value/clipfrac value/explained_var value/mean value/error adv/mean adv/std return/mean grad/norm "
    "grad/norm_critic opt/lr len/response_mean len/response_clip_ratio".split()
)
# Written as NaN by design when the returns of a batch are constant (CleanRL, docs/sources.md#nan-encodings).
BENIGN_NAN = frozenset({"value/explained_var"})
GRAD_NORMS = frozenset({"grad/norm", "grad/norm_critic"})
SKIPPED_WATCH = "the reward and the losses: skipped steps cost only the updates they would have made, unless they grow frequent"


def _where_it_ends(steps: np.ndarray, nf: NonFinite) -> str:
    """The truth about the end of the run: non-finite to the end (from which step), or finite
    after the last non-finite stretch; with the number of stretches when there are several."""
    spans = nf.spans(steps)
    last = spans[-1]
    stretches = f" in {len(spans)} stretches" if len(spans) > 1 else ""
    if last.end_step == int(steps[-1]):
        if len(spans) == 1:
            return " and never finite again"
        return f"{stretches}, and non-finite from step {last.start_step} to the end of the run"
    return f"{stretches}, the last at step {last.end_step}; finite after it"


def _not_yet_measured(v: np.ndarray) -> bool:
    """Every non-finite point comes before the metric's first finite one, and it is finite from
    there to the end: a statistic with nothing to average yet (RLlib writes its episode return as
    NaN until the first episode ends), not broken numbers, which poison every later update."""
    finite = np.isfinite(v)
    first = int(np.argmax(finite))
    return bool(finite.any() and first > 0 and finite[first:].all())


def _pending(ctx: RuleContext, metric: str, v: np.ndarray) -> bool:
    """A live run, not known to have finished, whose training statistic has had no finite value
    yet: one not computed before training starts (keras-rl writes each episode's loss as NaN
    until its warm-up steps are done; blind set real53, whose healthy runs a live check stopped
    at the first episodes), which :func:`_not_yet_measured` will call so once a value comes.  The
    reward is measured from the first episode: a NaN reward is never pending (it would poison the
    first update's advantages).  The finished log is judged as it ends."""
    standing = ctx.run.standing
    return bool(standing.live and not standing.finished and metric not in REWARD_METRICS and not np.isfinite(v).any())


class NonFiniteValues(Rule):
    """A metric contains NaN or infinite values.

    **What it detects.** Every metric of the run, canonical or not, is scanned for NaN, +Inf
    and -Inf.  Severity: error for the training metrics (reward, KL, losses, policy, value,
    advantage statistics); info for ``value/explained_var``, which CleanRL writes as NaN when the
    returns are constant, and for metrics ppo_doctor does not know, grouped in one note (one it
    does not know that is never finite was never measured, and is skipped).  What an unknown
    metric's NaN or Inf means is its author's convention (a task error written as ``Infinity``
    when an answer does not parse, an observation statistic of a wrapper); a training that broke
    shows in the metrics it does know (its losses, reward, gradient norm), so the unknown one is
    a sign to check, not an outcome.  The onset is where the metric started to run away before
    the first non-finite value, when it did (e.g. a growing gradient norm), else the first
    non-finite step.

    A gradient norm that is finite again after its non-finite points is a sign, not broken
    numbers: a non-finite gradient that reached the weights would make every later forward pass,
    loss and gradient norm non-finite, so those steps were skipped (PyTorch's ``GradScaler`` skips
    ``optimizer.step()`` when the gradients hold infs or NaNs; veRL skips non-finite grad norms,
    verl#789).  A few isolated ones (fp16 loss-scale overflow) are an info note; more are judged
    by the outcome after them (:func:`.outcome.judge_sign`): an error only when the reward got
    worse or stopped improving.

    A metric that is non-finite only before its first finite value and finite from there to
    the end is an info note: it was not measured yet (RLlib's ``episode_reward_mean`` is NaN until
    an episode ends), since a non-finite update would leave every later value non-finite.  On a
    live run not known to have finished, a training statistic with no finite value yet is the
    same note (keras-rl's loss before its warm-up ends), never the reward, which the environment
    gives from the first episode; the finished log is judged as it ends.

    **Why it matters.** NaN in a loss, KL or reward poisons every later update: the run is
    broken from there.  Causes: overflow in ``exp`` (the k3 KL, verl#751), a learning rate too
    high, unnormalised rewards, fp16 without loss scaling, division by a zero std.

    **Known false positives.** Metrics a framework writes as NaN when undefined for a step
    (an empty batch of finished episodes); GRPO writes ``None`` for a key with only NaNs.

    **Source.** rlwatch and PTT ("any non-finite loss is critical"), AUTOTRAINER; verl#751, #789;
    how each format writes NaN (docs/sources.md#non-finite-values, docs/sources.md#nan-encodings).
    """

    code = "PD601"
    name = "non-finite-values"
    symptom = "nan"
    severity = "error"
    basis = "outcome"
    requires = ()
    params = {"isolated_share": 0.01, "min_prefix": 10}
    causes = NAN_CAUSES
    message = "{metric} has {count} non-finite value(s) ({kinds}) from step {first_step}{growing}{recovered}"

    @staticmethod
    def _severity(metric: str, v: np.ndarray, nf: NonFinite, n: int, isolated_share: float) -> str:
        if metric in BENIGN_NAN or _not_yet_measured(v):
            return "info"
        isolated = nf.recovered and nf.count <= max(2, int(isolated_share * n))
        if metric in GRAD_NORMS and isolated:
            return "info"
        return "error"

    def evaluate(self, ctx):
        p = ctx.params
        unknown = []
        for metric in ctx.run.frame.metrics:
            s, v = ctx.arrays(metric)
            nf = nonfinite(s, v)
            if nf.first_step is None:
                continue
            if metric not in CANONICAL:
                if not np.isfinite(v).any():
                    # a statistic the trainer never had a value for (ML-Agents' discrete
                    # entropy coefficient of an agent with no discrete actions: NaN at every
                    # summary): not measured, not a training that broke
                    continue
                unknown.append((metric, s, v, nf))
                continue
            pending = _pending(ctx, metric, v)
            severity = "info" if pending else self._severity(metric, v, nf, len(v), p["isolated_share"])
            finding = self._finding(ctx, metric, s, v, nf, severity, p, pending)
            if metric in GRAD_NORMS and np.isfinite(v[-1]):
                # finite again: the weights never took those steps (the docstring), so the skipped
                # updates matter only if the run suffers after them
                finding = judge_sign(ctx, replace(finding, basis="sign"), SKIPPED_WATCH)
            yield finding
        if unknown:
            unknown.sort(key=lambda item: item[3].first_step or 0)  # never None: each has a non-finite value
            metric, s, v, nf = unknown[0]
            f = self._finding(ctx, metric, s, v, nf, "info", p)  # a sign to check (the docstring)
            f.evidence.append(f"metrics not in ppo_doctor's vocabulary with non-finite values: {describe(m for m, *_ in unknown)}")
            yield f

    def _finding(self, ctx, metric, s, v, nf, severity, p, pending=False):
        first_idx = int(np.flatnonzero(nf.any)[0])
        start = nf.first_step
        finite_before = int(np.isfinite(v[:first_idx]).sum())
        if finite_before >= p["min_prefix"]:
            # did the metric run away before it broke?  Blow-ups are multiplicative, so judge the
            # log-magnitude of the finite prefix (offset by its median so values near 0 stay calm)
            mag = np.abs(v[: first_idx + 1])
            ref = float(median(mag[np.isfinite(mag)]))
            with np.errstate(invalid="ignore", divide="ignore"):
                logmag = np.log10(mag + max(ref, 1e-12))
            start = onset(s[: first_idx + 1], logmag, first_idx, "up").step
        counts = nf.counts()
        kinds = ", ".join(f"{k}: {c}" for k, c in counts.items() if c)
        recovered = _where_it_ends(s, nf)
        if _not_yet_measured(v):
            recovered = f", all before its first finite value (step {int(s[np.isfinite(v)][0])}): not measured until then"
        elif pending:
            recovered = ", on every point so far: not measured yet on this live run (judged when it ends)"
        bad_steps = s[nf.any]
        causes, unclipped = unclipped_causes(ctx, self.causes)
        causes, by_reward = reward_nan_causes(ctx, metric, int(nf.first_step), causes)
        return self.finding(
            ctx,
            metric=metric,
            observed={"count": nf.count, **{k: float(c) for k, c in counts.items()}},
            # the headline step is where the condition first holds, the first non-finite value
            # (docs/architecture.md#contracts); a run-up before it is context in the message
            start_step=int(nf.first_step),
            threshold_step=int(nf.first_step),
            peak_step=int(nf.first_step),
            end_step=int(bad_steps[-1]),
            severity=severity,
            causes=causes,
            evidence=[f"first non-finite value ({nf.first_kind}) at step {nf.first_step}", *unclipped, *by_reward],
            fmt={
                "count": nf.count,
                "kinds": kinds,
                "first_step": nf.first_step,
                "growing": f" (its magnitude growing since step {int(start)})" if start < nf.first_step else "",
                "recovered": recovered,
            },
        )

    @classmethod
    def bad_example(cls):
        # the gradient norm runs away, then the losses turn NaN (e.g. k3 KL overflow)
        g = ramp(100, 1.0, 1.0, sd=0.05, seed=39)
        g[60:80] = np.geomspace(1.0, 1e6, 20)
        g[80:] = np.nan
        loss = saturating(100, 1.0, 0.3, sd=0.01, seed=40)
        loss[80:] = np.nan
        return Example(series={"grad/norm": g, "loss/policy": loss})

    @classmethod
    def good_example(cls):
        return Example(series={"grad/norm": ramp(100, 1.0, 1.0, sd=0.05, seed=39), "loss/policy": saturating(100, 1.0, 0.3, sd=0.01)})

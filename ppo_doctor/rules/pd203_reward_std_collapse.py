"""PD203 reward-std-collapse."""

from __future__ import annotations

import numpy as np

from ..detect import early_late, held_at_max, mask_to_spans, median, percentile, summarize
from ..canonical.hparams import temperature_regime
from ..standing import FAIR_SHARE
from .base import Example, Rule, as_trend
from .examples import decay, flat, ramp, saturating
from .incidents import incident
from .messages import fmt_num
from .reward_progress import reward_arrays


class RewardStdCollapse(Rule):
    """The reward's spread across the batch collapses toward zero.

    **What it detects.** ``reward/std`` (the standard deviation of the scores within a batch)
    ends the run below ``drop`` times its early level (medians of the first and last 10 %).
    What that means depends on the mean reward (change against its own noise, 3 s.e.):

    * reward rose and the KL to the reference ended above its band (PD101's units): reward
      hacking, every response found the same high-scoring pattern far from the SFT model;
    * reward rose while the KL stayed inside its band: not reported.  A reward with a ceiling
      (a bounded scorer, an accuracy) must lose its spread as its mean approaches the ceiling
      (Bhatia-Davis: variance <= (max - mean)(mean - min)), and a policy that stays near the
      reference while doing so has learned the task, not exploited the reward;
    * reward flat: stagnation, every response scores the same, so the advantages, and the
      learning signal, vanish (GRPO's ``frac_reward_zero_std`` case); but a reward that reached
      its top inside the first window and holds it (its median at its maximum) is read as a
      rising one: the spread is gone because every sample scores the top;
    * reward fell: entropy collapse, the policy degenerated into responses the reward cannot
      tell apart (typically after a KL blow-up).

    Sampled at a temperature of at most 0.3 (``hparams.GREEDY_TEMPERATURE``, half the lowest that
    GRPO recipes sample at: DeepSeek-R1 0.6, DAPO 1.0), a rising reward whose spread collapses is
    read as stagnation instead: near-greedy decoding gives every member of a group the same
    completion, so their rewards are equal because the sampler stopped exploring, not because
    the policy found an exploit; the learning signal is gone either way.  The KL that TRL logs
    is computed on logits divided by that temperature (``trl/trainer/utils.py``, policy and
    reference alike), so it looks far above its band too.

    Without a ``kl/ref`` metric (GRPO's default beta = 0 logs none), a rising reward whose last
    window sits at the top of the run's reward range (within two standard errors of its 95th
    percentile) is not reported either: every sample now gets the best score the run reached
    (in GRPO every group at the ceiling has std 0: success); one still climbing is read as
    hacking (nothing shows the policy stayed near the reference).

    **Why it matters.** Diversity has collapsed (trl#204: at the end every prompt gets the same
    response) or the policy has collapsed; either way the gradient signal from reward
    differences is gone.

    **Known false positives.** A reward that rose and whose spread collapsed while it still
    climbs (not yet at its top) in a log without a KL metric.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).  One case is an event, judged
    where the run stands: sampling near-greedy by config (temperature at most 0.3) with the spread
    down to ``no_signal`` of its early level, an error resting on its outcome: every group's
    completions are the same text, no advantage is left, and the steps left in the plan cannot
    change that (issue 41).

    **Source.** PTT reward_std rules, rlwatch reward-variance detector; huggingface/trl#204; TRL
    GRPO ``frac_reward_zero_std`` (docs/sources.md#reward-std, docs/sources.md#trl-grpo-metrics).
    """

    code = "PD203"
    name = "reward-std-collapse"
    symptom = "reward_hacking"
    severity = "warning"
    basis = "sign"
    watch = "the reward and the samples: a reward spread that vanishes matters if the reward stalls"
    evidence = "event"  # no learning signal left under near-greedy sampling; the rest is a trend (evaluate)
    requires = ("reward/std",)
    params = {"drop": 0.1, "min_change": 3.0, "no_signal": 1e-3, "fair_share": FAIR_SHARE, "min_points": 20}
    causes = {"reward-model-flawed": 0.6, "kl-coef-too-low": 0.5, "weak-learning-signal": 0.3}
    message = "reward std across the batch fell from {first:num} to {late:num} ({pct}): {meaning}"

    def evaluate(self, ctx):
        p = ctx.params
        x = ctx.req[0]
        s, v, first, late = x.steps, x.values, x.early, x.late
        if len(v) < p["min_points"]:
            return
        if not first > 0 or late > p["drop"] * first:
            return
        trend = 0  # +1 rose, -1 fell, 0 no significant change
        at_ceiling = False
        reward = reward_arrays(ctx, p["min_points"])
        if reward is not None:
            _, rs, rv = reward
            r = summarize(rs, rv)
            if abs(r.change_in_noise) >= p["min_change"]:
                trend = 1 if r.change > 0 else -1
            se = r.noise * np.sqrt(2.0 / max(1, r.window))
            at_ceiling = r.last >= float(percentile(rv, 95)) - 2 * se
            if trend == 0 and held_at_max(rv) is not None:
                # reached its top inside the first window and stayed (no early-vs-late change
                # to measure): the spread vanished because every sample scores the top
                trend = 1
        temperature = ctx.view.cfg_float("temperature")
        no_signal = False
        if trend > 0 and temperature is not None and temperature_regime(temperature) == "greedy":
            # the config says why every group agrees: the sampler, not a solved task; with the
            # spread all but gone the run has no gradient left, which the plan cannot change
            no_signal = late <= p["no_signal"] * first
            symptom = "stagnation"
            meaning = (
                f"sampling at temperature {fmt_num(temperature)} is near-greedy, so a group's completions are the "
                "same text and score alike: advantages and the learning signal vanish"
            )
            causes = {"generation-settings": 0.9, "weak-learning-signal": 0.5}
        elif trend > 0:
            view = ctx.view.kl
            if view is not None and len(view.values) >= p["min_points"]:
                if early_late(view.values)[1] <= view.band:
                    return  # the reward reached its ceiling with the policy near the reference
            elif at_ceiling:
                return  # no KL logged, and every sample scores the best the run reached: success
            symptom, meaning = "reward_hacking", "responses converge on one high-scoring pattern"
            causes = {"reward-model-flawed": 0.8, "kl-coef-too-low": 0.7}
        elif trend < 0:
            symptom, meaning = "entropy_collapse", "the reward fell and every response now scores alike: the policy degenerated"
            causes = {"lr-too-high": 0.6, "kl-coef-too-low": 0.5, "no-grad-clipping": 0.3}
        else:
            symptom, meaning = "stagnation", "every response scores alike, so advantages and the learning signal vanish"
            causes = {"weak-learning-signal": 0.9, "reward-model-flawed": 0.4}
        span = mask_to_spans(s, v <= p["drop"] * first, v, peak="min")[0]
        if span.start_idx > 0:
            # a fall inside the first window leaves its median near the collapsed level: the
            # message says the level the spread fell from, the points before the stretch
            first = max(first, float(median(v[: span.start_idx])))
        finding = incident(
            self,
            ctx,
            metric=x.metric,
            steps=s,
            values=v,
            span=span,
            direction="down",
            observed={"first": first, "late": late},
            end_step=int(s[-1]),
            symptom=symptom,
            causes=causes,
            fmt={"pct": f"-{1 - late / first:.0%}", "meaning": meaning},
            severity="error" if no_signal else self.severity,
            basis="outcome" if no_signal else self.basis,
        )
        yield finding if no_signal else as_trend(ctx, finding)

    @classmethod
    def bad_example(cls):
        # the spread collapses while the KL runs far past its band
        return Example(
            series={"reward/std": decay(150, 1.0, 0.02, sd=0.01, seed=17), "reward/score": saturating(150, 0.0, 3.0, sd=0.1), "kl/ref": ramp(150, 0.0, 40.0, sd=1.0, seed=19)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )

    @classmethod
    def good_example(cls):
        return Example(series={"reward/std": flat(150, 0.9, 0.05, seed=18), "reward/score": saturating(150, 0.0, 3.0, sd=0.1)})


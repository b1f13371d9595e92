"""PD901 missing-reward."""

from __future__ import annotations

from ..canonical.frameworks import PREFERENCE_FRAMEWORKS
from ..canonical.metrics.mapping import table_for
from .base import Example, Rule, RuleContext
from .examples import flat, ramp
from .outcome import task_series

REWARDS = ("reward/score", "reward/total")

# Frameworks whose episode reward is written only when a wrapper records episodes: the usual
# reason it is missing, and the fix.  SB3's ``rollout/ep_rew_mean`` comes from the ``Monitor``
# wrapper's ``info["episode"]`` (docs/sources.md#sb3-logger-keys; make_vec_env adds the wrapper);
# stable-baselines v2 writes ``episode_reward`` from the same Monitor; CleanRL's
# ``charts/episodic_return`` comes from ``gym.wrappers.RecordEpisodeStatistics``
# (cleanrl/ppo.py, ``make_env``).
WRAPPER_HINT = {
    "sb3": "; SB3 logs it only for environments wrapped in a Monitor (make_vec_env adds one)",
    "sb2": "; stable-baselines logs it only for environments wrapped in a Monitor",
    "cleanrl": "; CleanRL logs it only for environments wrapped in gym.wrappers.RecordEpisodeStatistics",
}

# An offline preference trainer (DPO and its kin) scores fixed pairs; it samples nothing a reward
# could score, and its implicit rewards (rewards/*) are log-ratios, not task rewards.
OFFLINE_HINT = "; offline preference optimisation (DPO and its kin) samples nothing to score, so it has none by design"


def _unjudged(ctx: RuleContext) -> str:
    """What the missing reward leaves unjudged: stagnation is still judged on a task the run
    measures (PD212), reward spikes and hacking are not."""
    tasks = task_series(ctx)
    if tasks:
        return f"reward spikes and hacking were not judged (progress is judged on {tasks[0][0]}: PD212)"
    return "reward spikes, hacking and stagnation were not judged"


class MissingReward(Rule):
    """No reward metric was found in the log.

    **What it detects.** The run has neither ``reward/score`` nor ``reward/total`` (after the
    alias table; an unmapped reward tag can be mapped with ``aliases`` in the config).  The
    message names the tags the run's framework writes its reward under (SB3's
    ``rollout/ep_rew_mean``, TRL GRPO's ``reward``) and, where the framework writes the episode
    reward only through a wrapper (SB3's and stable-baselines' ``Monitor``, CleanRL's
    ``RecordEpisodeStatistics``), says so: a missing wrapper is the usual reason.  An info note
    on offline preference optimisation (DPO and its kin), which samples nothing and so has no
    reward by design; its implicit-reward accuracy is judged instead (PD212).

    **Why it matters.** Mean reward is, with KL, the first thing the guides tell you to watch.
    Without it, reward spikes, hacking, stagnation and oscillation cannot be judged, and the
    verdict says so instead of calling the run healthy.

    **Known false positives.** Supervised (SFT) runs, which have no reward by nature; a reward
    logged under a custom name (add an alias).

    **Source.** The guides' metrics to watch, mean reward and KL first (docs/sources.md#guides);
    one metric under several prefixes (docs/sources.md#metric-prefixes).
    """

    code = "PD901"
    name = "missing-reward"
    symptom = "log_quality"
    severity = "warning"
    basis = "log"
    requires = ()
    params = {}
    causes = {}
    message = "no reward metric ({expected}) in this log{hint}: {unjudged}"

    def evaluate(self, ctx):
        if any(ctx.has(m) for m in REWARDS):
            return
        rng = ctx.run.frame.step_range()
        first, last = (None, None) if rng is None else rng
        framework = ctx.view.framework
        # the framework's first spelling of each reward (its table's order is its preference);
        # a log whose framework nothing tells gets the canonical names
        firsts: dict[str, str] = {}
        if framework not in ("unknown", "other"):
            for alias in table_for(framework):
                if alias.canonical in REWARDS:
                    firsts.setdefault(alias.canonical, alias.raw)
        tags = [firsts[c] for c in REWARDS if c in firsts]
        offline = framework in PREFERENCE_FRAMEWORKS
        yield self.finding(
            ctx,
            metric="reward/score",
            observed={},
            start_step=first,
            threshold_step=first,
            end_step=last,
            # nothing sampled, nothing scored: no reward is the design, not a gap in the log
            severity="info" if offline else self.severity,
            fmt={
                "expected": " or ".join(tags or REWARDS),
                "hint": OFFLINE_HINT if offline else WRAPPER_HINT.get(framework, ""),
                "unjudged": _unjudged(ctx),
            },
        )

    @classmethod
    def bad_example(cls):
        return Example(series={"loss/policy": flat(20, 0.3, 0.05), "kl/ref": flat(20, 2.0, 0.2)})

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": ramp(20, 1.0, 2.0, sd=0.1)})

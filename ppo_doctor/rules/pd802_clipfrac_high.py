"""PD802 clipfrac-high."""

from __future__ import annotations

import numpy as np

from ..detect import sustained_spans
from .base import Example, Rule
from .common import cfg_int, finite_arrays, fmt_num, incident, sustain_window, unclipped_causes
from .examples import flat, saturating


class ClipfracHigh(Rule):
    """A large share of tokens hits the PPO clip, update after update.

    **What it detects.** ``policy/clipfrac`` above ``max_clipfrac`` (0.3) for a sustained
    stretch (60 % of a window of 5 % of the run).  Error above ``error_clipfrac`` (0.6).

    **Why it matters.** The clip fraction is the share of tokens whose ratio left [1-eps, 1+eps]
    during the update; when a third or more are clipped every step the optimiser is pushing
    past the trust region on each batch: learning rate too high or too many epochs/minibatches.

    **Configuration-aware.** A clip fraction of exactly 0 with one epoch and one minibatch is
    expected (ratio = 1 by construction) and is never a symptom here (see PD304).

    **Known false positives.** Very small clip ranges (eps 0.05) clip more by design; classic
    RL with many epochs per batch often sits around 0.1-0.3 (below the default threshold).

    **Source.** PTT clip_fraction > 0.3 (its comment: "typically < 0.2"); folklore band 0.1-0.3
    (weakly sourced); DAPO#11 / verl#791 for the zero case (thresholds-and-peers.md §4.1, §7).
    """

    code = "PD802"
    name = "clipfrac-high"
    symptom = "unstable_updates"
    severity = "warning"
    requires = ("policy/clipfrac",)
    params = {"max_clipfrac": 0.3, "error_clipfrac": 0.6, "min_points": 5}
    causes = {"lr-too-high": 0.7, "too-many-ppo-epochs": 0.7, "batch-too-large": 0.2}
    message = "clip fraction stays above {max_clipfrac:g} {since} (median {median_s} there, peak value {peak_s})"

    def evaluate(self, ctx):
        p = ctx.params
        s, v = finite_arrays(ctx, "policy/clipfrac")
        if len(v) < p["min_points"]:
            return
        k, w = sustain_window(len(v))
        spans = sustained_spans(s, v > p["max_clipfrac"], k, w, values=v)
        if not spans:
            return
        covered = np.concatenate([v[sp.start_idx : sp.end_idx + 1] for sp in spans])
        median = float(np.median(covered))
        worst = max(spans, key=lambda sp: sp.peak_value)
        epochs = cfg_int(ctx.run, "ppo_epochs")
        causes, evidence = unclipped_causes(ctx, self.causes)
        if epochs is not None:
            evidence.insert(0, f"config: ppo_epochs={epochs}")
        yield incident(
            self,
            ctx,
            metric="policy/clipfrac",
            steps=s,
            values=v,
            span=spans[0],
            direction="up",
            observed={"median": median, "peak": worst.peak_value},
            peak_step=worst.peak_step,
            end_step=spans[-1].end_step,
            severity="error" if median >= p["error_clipfrac"] else "warning",
            causes=causes,
            evidence=evidence,
            fmt={"median_s": fmt_num(median), "peak_s": fmt_num(worst.peak_value)},
        )

    @classmethod
    def bad_example(cls):
        return Example(series={"policy/clipfrac": saturating(100, 0.05, 0.45, sd=0.03, seed=55)}, config={"ppo_epochs": 16})

    @classmethod
    def good_example(cls):
        return Example(series={"policy/clipfrac": np.abs(flat(100, 0.12, 0.03, seed=56))}, config={"ppo_epochs": 4})

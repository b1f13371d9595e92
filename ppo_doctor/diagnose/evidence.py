"""Evidence about causes from the run's own configuration and logged values.

A symptom says *what* went wrong; the run's hyper-parameters often say *why*: a KL
coefficient of 0.001, ``top_k=50`` during rollouts, 16 PPO epochs.  Each function here
looks at one cause and returns :class:`Evidence` items with a signed weight (log-factor):
positive supports the cause, negative argues against it.  Thresholds are the values of
published recipes (docs/sources.md#reference-recipes, docs/sources.md#cause-evidence) and are
framework-aware: a learning rate of 3e-4 is normal for CleanRL/SB3 control tasks and far too
high for an LLM policy.

Evidence never creates a cause on its own (config alone is not a symptom): the ranking
multiplies finding support by ``exp(sum of weights)``.  Its weight follows how specific it
is: a knob whose value is itself the fault (``kl_coef = 0``, ``max_grad_norm = None``,
``min_new_tokens`` set, ``reward_scale = 100``) weighs up to 1.0; a value that only looks high
against recipes written for other model sizes (a learning rate of 1e-4 for a model of unknown
size) weighs 0.3, so it can strengthen a cause the findings support but not outrank the
cause they point at; and logged behaviour can argue against a knob (updates whose approx KL
and clip fraction stay small were not made too large by the learning rate).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ..detect import early_late, held_at_max, median
from ..canonical.hparams import temperature_regime
from ..canonical.metrics import NONNEGATIVE_ESTIMATORS
from ..view.clip_higher import DAPO_CLIP_HIGH, LARGE_ENTROPY_BONUS, clip_bounds
from ..run import Run
from ..view import RunView


class Evidence(NamedTuple):
    """One thing the run's config or logs say about a cause, with its signed weight."""

    weight: float  # log-factor: > 0 supports the cause, < 0 argues against it
    text: str

    def render(self) -> str:
        return self.text if self.weight >= 0 else f"against: {self.text}"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _lr(v: RunView) -> tuple[float | None, str]:
    lr = v.cfg_float("lr")
    if lr is not None:
        return lr, f"config lr = {_fmt(lr)}"
    vals = v.values("opt/lr")
    # a console that prints 3 decimals (veRL <= 0.4) shows small LRs as 0.000: ignore zeros there
    if len(vals) and not (vals.max() == 0 and "console" in v.run.format):
        peak = float(vals.max())
        return peak, f"logged {v.raw('opt/lr')} peaks at {_fmt(peak)}"
    return None, ""


def _kl_coef(v: RunView) -> tuple[float | None, str]:
    beta, where = v.kl_coefficient()
    if beta is None:
        return None, ""
    if where == "config":
        return beta, f"config kl_coef = {_fmt(beta)}"
    return beta, f"logged {v.raw('kl/coef')} median {_fmt(beta)}"


def reward_per_kl(v: RunView) -> tuple[float, float, float] | None:
    """``(reward gained per nat of KL, reward gain, KL gain)`` from the first to the last tenth of
    the run, when both rose; None otherwise, when the KL is not a sequence sum, or when the score
    is whitened or scaled before the penalty meets it.

    The policy maximises ``score - beta x KL`` per sequence (TRL: ``rlhf_reward = scores -
    kl_coef x kl``, with ``objective/kl`` summed over the response; Ziegler et al. 2019): it keeps
    drifting while a nat of KL earns more score than the ``beta`` it costs.  A token-mean KL would
    need the response length to compare with beta, so it is left out."""
    kl = v.kl
    score = v.values("reward/score")
    if kl is None or kl.reduction != "seq_sum" or len(kl.values) < 10 or len(score) < 10:
        return None
    if v.cfg_bool("whiten_rewards") is True or v.cfg_float("reward_scale") not in (None, 1.0):
        return None  # the penalty meets a rescaled score, not the one logged
    kl0, kl1, _ = early_late(kl.values)
    r0, r1, _ = early_late(score)
    dkl, dr = kl1 - kl0, r1 - r0
    if not (dkl > 0 and dr > 0):
        return None
    return dr / dkl, dr, dkl


def kl_coef_too_low(v: RunView) -> list[Evidence]:
    beta, where = _kl_coef(v)
    if beta is None:
        return []
    if beta == 0 and v.is_grpo:
        # beta = 0 is GRPOTrainer's default since TRL 0.19 (after DAPO and Dr. GRPO found the KL
        # term unneeded; docs/sources.md#missing-kl-by-design): a choice many healthy runs make, so
        # it can add to a symptom's own causes but not outrank them
        return [Evidence(0.4, f"{where}: no KL penalty (GRPO's default since TRL 0.19): nothing pulls the policy back")]
    if beta == 0:
        return [Evidence(1.0, f"{where}: no KL penalty at all")]
    if beta < 0.01:
        return [Evidence(0.7, f"{where} is below 0.01 (recipes use 0.02-0.2)")]
    if beta < 0.02:
        return [Evidence(0.3, f"{where} is below the usual 0.02-0.2")]
    if beta < 0.1:
        # the fixed values recipes actually use (MOSS-RLHF 0.02, N+ implementation details 0.05):
        # a run that drifts with one of them needs another reason as well (docs/sources.md#kl-coefficient-recipes)
        prior, said = 0.2, f"{where} is a usual fixed value (MOSS-RLHF 0.02, N+ details 0.05)"
    else:
        # 0.1 and above (TRL legacy init 0.2) is a firm constraint
        prior, said = 0.4, f"{where} is a firm KL penalty (recipes use 0.02-0.2)"
    # ... for a reward on the recipes' scale.  Whether this run's own reward outpaid its penalty
    # (reward_per_kl above beta) is said as well: that is why a usual beta can still be too low
    # for a run.  It weighs nothing: a weak beta and a reward model that pays for drifting (which
    # the samples tell apart, PD95x) both make drifting pay, so it explains rather than decides.
    drift = reward_per_kl(v)
    if drift is None or beta >= drift[0]:
        return [Evidence(-prior, said)]
    slope, dr, dkl = drift
    return [
        Evidence(-prior, said),
        Evidence(0.0, f"but {where} is too low for this run's reward scale: the reward rose {_fmt(dr)} while the KL "
                      f"rose {_fmt(dkl)} nats per sequence, {_fmt(slope)} per nat, above beta: each nat of drift "
                      "earned more reward than the penalty took back"),
    ]


def ent_coef_too_low(v: RunView) -> list[Evidence]:
    """SB3's and CleanRL's continuous-action PPO default to no entropy bonus (``ent_coef=0.0``);
    CleanRL's discrete ``ppo.py`` and baselines' Atari setting use 0.01."""
    c = v.cfg_float("entropy_coef")
    if c is None:
        return []
    if c <= 0:
        return [Evidence(0.8, f"entropy_coef = {_fmt(c)}: no entropy bonus keeps the policy exploring")]
    if c < 0.001:
        return [Evidence(0.4, f"entropy_coef = {_fmt(c)} is below 0.001: a negligible entropy bonus")]
    if c >= 0.01:
        return [Evidence(-0.5, f"entropy_coef = {_fmt(c)} is the usual 0.01 or more")]
    return []


def entropy_bonus_too_high(v: RunView) -> list[Evidence]:
    """An entropy bonus pays for spreading probability: none cannot raise the entropy; TRL and veRL
    default to 0, SB3 and CleanRL use at most about 0.01, so above 0.05 it is large anywhere."""
    c = v.cfg_float("entropy_coef")
    if c is None:
        return []
    if c <= 0:
        return [Evidence(-1.0, f"entropy_coef = {_fmt(c)}: no entropy bonus")]
    if c > LARGE_ENTROPY_BONUS:
        return [Evidence(0.8, f"entropy_coef = {_fmt(c)}: a large entropy bonus (TRL and veRL default to 0, classic PPO uses <= 0.01)")]
    return [Evidence(0.2, f"entropy_coef = {_fmt(c)}: an entropy bonus is on")]


def clip_higher_too_wide(v: RunView) -> list[Evidence]:
    b = clip_bounds(v.run)
    if b is None:
        return []
    if b.high <= b.low:
        return [Evidence(-1.0, f"no clip-higher: the upper clip bound {_fmt(b.high)} is not above the lower {_fmt(b.low)}")]
    if b.high > DAPO_CLIP_HIGH:
        return [Evidence(0.8, f"{b.key} = {_fmt(b.high)} is above DAPO's {_fmt(DAPO_CLIP_HIGH)} (lower bound {_fmt(b.low)})")]
    return [Evidence(0.2, f"clip-higher is on: {b.key} = {_fmt(b.high)} over {_fmt(b.low)}")]


def adaptive_kl_target_too_high(v: RunView) -> list[Evidence]:
    adaptive = v.cfg("adaptive_kl")
    if adaptive is False:
        return [Evidence(-1.0, "the KL controller is fixed (adaptive_kl = False)")]
    target = v.cfg_float("target_kl")
    if adaptive is None or target is None:
        return []
    if target > 10:
        return [Evidence(0.8, f"adaptive KL target = {_fmt(target)} is above the 0-10 band")]
    if target <= 6:
        return [Evidence(-0.4, f"adaptive KL target = {_fmt(target)} is at or below the usual 6")]
    return []


# Per-update size below which an update is not over-aggressive: Spinning Up's target_kl 0.01
# (PTT flags approx KL above 0.02) and a clip fraction below PTT's "typically < 0.2"
# (docs/sources.md#approx-kl).
SMALL_UPDATE_KL = 0.01
SMALL_UPDATE_CLIPFRAC = 0.1


def small_updates(v: RunView) -> Evidence | None:
    """Evidence that the logged PPO updates stay small (against lr-too-high and too many epochs).

    A learning rate or an epoch count is "too high" through what it does to each update: the
    ratio leaves the trust region, clipping saturates, approx KL per update rises.  When those
    measurements are logged and small, a config value that merely looks high for a large model
    is not what went wrong.  With one epoch and one minibatch the ratio is 1 by construction and
    the measurements say nothing (DAPO#11, verl#791).
    """
    if (v.cfg_float("ppo_epochs") or 0) == 1 and (v.cfg_float("num_mini_batches") or 1) <= 1:
        return None
    kl, frac = v.informative_median("kl/old"), v.informative_median("policy/clipfrac")
    if kl is None and frac is None:
        return None
    if (kl is not None and abs(kl) > SMALL_UPDATE_KL) or (frac is not None and frac > SMALL_UPDATE_CLIPFRAC):
        return None
    parts = [f"{v.raw(m)} median {_fmt(x)}" for m, x in (("kl/old", kl), ("policy/clipfrac", frac)) if x is not None]
    return Evidence(-0.6, f"the logged updates stay small ({', '.join(parts)})")


def lr_too_high(v: RunView) -> list[Evidence]:
    out = []
    lr, where = _lr(v)
    if lr is not None:
        if v.domain == "llm":
            # RLHF recipes (1e-6 to 1.4e-5) are for billion-parameter models; a small model
            # tolerates far more, and the logs rarely say the model size, so a rate above the
            # recipes is only mild evidence until it exceeds what even small models pretrain at
            # (GPT-3 125M: 6e-4)
            if lr > 1e-3:
                out.append(Evidence(0.7, f"{where} is above what even small language models are trained at (<= 1e-3)"))
            elif lr > 1e-4:
                out.append(Evidence(0.5, f"{where} is far above LLM RLHF ranges (1e-6 to 1.4e-5 for large models)"))
            elif lr > 5e-5:
                out.append(Evidence(0.3, f"{where} is above LLM RLHF ranges (1e-6 to 1.4e-5 for large models)"))
            elif lr <= 2e-5:
                out.append(Evidence(-0.3, f"{where} is within LLM RLHF ranges"))
        elif v.domain == "classic":
            if lr > 3e-3:
                out.append(Evidence(0.7, f"{where} is about 10x the usual PPO 3e-4"))
            elif lr > 1e-3:
                out.append(Evidence(0.3, f"{where} is above the usual PPO 3e-4"))
            elif lr <= 5e-4:
                out.append(Evidence(-0.3, f"{where} is the usual PPO range"))
        elif lr > 3e-3:
            out.append(Evidence(0.5, f"{where} is high for PPO"))
    small = small_updates(v)
    if small is not None:
        out.append(small)
    return out


def lr_too_low(v: RunView) -> list[Evidence]:
    lr, where = _lr(v)
    if lr is None:
        return []
    if lr == 0:
        return [Evidence(1.2, f"{where}: the policy cannot learn")]
    floor = 1e-6 if v.domain == "classic" else 1e-7
    if lr < floor:
        return [Evidence(0.8, f"{where} is below {floor:g}")]
    # at or above the top of the usual range (LLM RLHF 1e-6..1e-5, classic PPO 3e-4) the rate is
    # not what keeps the policy still: raising it is not the fix (catalog fix_ranges)
    top = 3e-4 if v.domain == "classic" else 1e-5
    if v.domain != "unknown" and lr >= top:
        return [Evidence(-1.0, f"{where} is at or above the usual range's top ({top:g})")]
    ok = 1e-4 if v.domain == "classic" else 1e-6
    if lr >= ok:
        return [Evidence(-0.3, f"{where} is not small")]
    return []


def weak_learning_signal(v: RunView) -> list[Evidence]:
    """Groups (or batches) whose samples all score alike leave no advantage to learn from.

    Not when they agree at the reward's top: in GRPO every sample of a group at a bounded
    reward's ceiling gives a zero std (the "accuracy 1" groups that DAPO's dynamic sampling
    filters out, arXiv:2503.14476): a saturated task, not a missing signal.  A sparse reward
    that never pays agrees at its bottom, and still counts."""
    out = []
    score = v.values("reward/score")
    top = held_at_max(score) if len(score) >= 3 else None  # most batches score the run's best
    zero = v.median("reward/zero_std_frac")
    std = v.median("reward/std")
    if top is not None and ((zero is not None and zero > 0.5) or (std is not None and std < 1e-8)):
        return [Evidence(-0.8, f"{v.raw('reward/score')} sits at its top ({_fmt(top)}) most of the run: "
                               "groups agree because every sample earns the top reward, not for lack of signal")]
    if zero is not None:
        if zero > 0.5:
            out.append(Evidence(0.8, f"{v.raw('reward/zero_std_frac')} median {_fmt(zero)}: most prompt groups get identical rewards"))
        elif zero < 0.1:
            out.append(Evidence(-0.3, f"{v.raw('reward/zero_std_frac')} median {_fmt(zero)}: groups do see reward differences"))
    if std is not None and std < 1e-8:
        out.append(Evidence(0.8, f"{v.raw('reward/std')} is 0: the reward does not vary"))
    adv = v.median("adv/std")
    if adv is not None and adv < 1e-8:
        out.append(Evidence(0.6, f"{v.raw('adv/std')} is 0: advantages carry no signal"))
    beta, where = _kl_coef(v)
    if beta is not None and beta >= 0.5 and v.domain != "classic":
        out.append(Evidence(0.4, f"{where}: a strong KL penalty can outweigh the reward"))
    return out


def no_lr_annealing(v: RunView) -> list[Evidence]:
    """A logged learning rate that never decays supports it, one that decays argues against it;
    a config ``anneal_lr`` flag (CleanRL) says so directly."""
    flag = v.cfg("anneal_lr")
    if isinstance(flag, bool):
        return [Evidence(0.6, "anneal_lr = False") if not flag else Evidence(-0.8, "anneal_lr = True")]
    vals = v.values("opt/lr")
    if len(vals) < 3 or not vals.max() > 0:
        return []
    peak, late = float(vals.max()), float(vals[-max(1, len(vals) // 10) :].mean())
    if late >= 0.99 * peak:
        return [Evidence(0.5, f"logged {v.raw('opt/lr')} stays at {_fmt(peak)} to the end: not annealed")]
    if late <= 0.5 * peak:
        return [Evidence(-0.6, f"logged {v.raw('opt/lr')} decays from {_fmt(peak)} to {_fmt(late)}")]
    return []


def too_many_ppo_epochs(v: RunView) -> list[Evidence]:
    small = small_updates(v)
    return ([small] if small is not None else []) + _epochs_config(v)


def _epochs_config(v: RunView) -> list[Evidence]:
    epochs = v.cfg_float("ppo_epochs")
    if epochs is None:
        return []
    mb = v.cfg_float("num_mini_batches") or 1.0
    steps = epochs * mb
    desc = f"ppo_epochs = {epochs:g}" + (f" x {mb:g} minibatches" if mb > 1 else "")
    if v.domain == "classic":
        # CleanRL/SB3 MuJoCo recipes run 10 epochs x 32 minibatches: only extreme values count
        if epochs >= 20:
            return [Evidence(0.6, f"{desc}: many passes even for classic PPO (usual 4-10)")]
        if epochs <= 4:
            return [Evidence(-0.3, f"{desc} is a usual classic PPO setting")]
        return []
    if epochs >= 8:
        return [Evidence(0.8, f"{desc}: well above the usual 1-4 for LLM PPO")]
    if steps >= 32:
        return [Evidence(0.5, f"{desc} = {steps:g} updates per batch (trl#454: 64 pushed ratios up)")]
    if epochs >= 5:
        return [Evidence(0.3, f"{desc} is above the usual 1-4")]
    if epochs == 1 and mb <= 1:
        return [Evidence(-0.8, f"{desc}: one gradient step per batch cannot over-optimise it")]
    if epochs <= 2 and mb <= 2:
        return [Evidence(-0.5, f"{desc} is a light update schedule")]
    return []


def batch_too_large(v: RunView) -> list[Evidence]:
    bs = v.cfg_float("batch_size")
    if bs is None or v.domain == "classic":
        return []
    if bs >= 1024:
        return [Evidence(0.4, f"batch_size = {bs:g} rollouts per update is large")]
    if bs <= 64:
        return [Evidence(-0.3, f"batch_size = {bs:g} is small")]
    return []


def no_grad_clipping(v: RunView) -> list[Evidence]:
    if not v.has_cfg("max_grad_norm"):
        return []
    g = v.cfg("max_grad_norm")
    if g is None or (isinstance(g, (int, float)) and g <= 0):
        return [Evidence(0.8, f"max_grad_norm = {g}: gradients are not clipped")]
    g = float(g)
    if g >= 100:
        return [Evidence(0.6, f"max_grad_norm = {_fmt(g)} is too loose to ever clip")]
    if g <= 1.0:
        return [Evidence(-0.6, f"max_grad_norm = {_fmt(g)} clips gradients")]
    if g <= 10:
        return [Evidence(-0.2, f"max_grad_norm = {_fmt(g)} clips large gradients")]
    return []


def policy_not_from_sft(v: RunView) -> list[Evidence]:
    init, ref = v.cfg("init_from"), v.cfg("ref_model")
    if not init or not ref:
        return []
    if str(init).rstrip("/") != str(ref).rstrip("/"):
        return [Evidence(1.0, f"policy starts from {init!r} but the reference is {ref!r}")]
    return [Evidence(-0.6, f"policy and reference both start from {init!r}")]


def reward_not_normalized(v: RunView) -> list[Evidence]:
    out = []
    w = v.cfg("whiten_rewards")
    if w is True:
        out.append(Evidence(-0.6, "rewards are normalised (whiten_rewards/normalize_reward on)"))
    elif w is False:
        out.append(Evidence(0.2, "reward normalisation is off"))
    scale = v.cfg_float("reward_scale")
    if scale is not None and abs(scale) >= 10:
        out.append(Evidence(0.6, f"reward_scale = {_fmt(scale)} multiplies the reward"))
    score = v.median("reward/score")
    std = v.median("reward/std")
    if (score is not None and abs(score) > 10) or (std is not None and std > 10):
        parts = [f"median {_fmt(score)}" if score is not None else "", f"std {_fmt(std)}" if std is not None else ""]
        out.append(Evidence(0.6, f"logged {v.raw('reward/score')} has a large scale ({', '.join(p for p in parts if p)})"))
    elif score is not None and abs(score) <= 3 and (std is None or std <= 3):
        out.append(Evidence(-0.3, f"logged {v.raw('reward/score')} stays on a unit scale"))
    return out


def reward_model_flawed(v: RunView) -> list[Evidence]:
    """A reward that varies within batches while its mean does not move over the run: the
    policy gets non-zero advantages at every step and learns nothing from them, so what the
    reward varies with is not something the policy can change (noise, a broken scorer)."""
    score, std = v.values("reward/score"), v.values("reward/std")
    if len(score) < 20 or len(std) < 20:
        return []
    spread = float(median(std))
    w = max(3, len(score) // 10)
    moved = abs(float(median(score[-w:])) - float(median(score[:w])))
    if spread > 0 and moved < REWARD_STILL_SHARE * spread:
        return [
            Evidence(
                1.0,
                f"{v.raw('reward/std')} median {_fmt(spread)} while the mean reward moved {_fmt(moved)} over the run: "
                "responses score differently but the policy learns nothing from it",
            )
        ]
    return []


# "Did not move" for reward_model_flawed: the mean's change over the run is below this share of
# one response's reward spread within a batch.
REWARD_STILL_SHARE = 0.1


def reward_not_clipped(v: RunView) -> list[Evidence]:
    out = []
    if v.has_cfg("reward_clip"):
        clip = v.cfg("reward_clip")
        if clip is None:
            out.append(Evidence(0.2, "reward_clip is off"))
        elif clip <= 10:
            out.append(Evidence(-0.6, f"rewards are clipped to +-{_fmt(clip)}"))
    vals = v.values("reward/score")
    if len(vals) and float(np.abs(vals).max()) > 10:
        out.append(Evidence(0.5, f"logged {v.raw('reward/score')} reaches {_fmt(float(vals[np.argmax(np.abs(vals))]))}, beyond +-10"))
    return out


def _no_critic(v: RunView) -> list[Evidence]:
    if v.has_critic() is False:
        return [Evidence(-1.5, f"{v.run.framework} trains without a critic")]
    return []


def value_lr_mistuned(v: RunView) -> list[Evidence]:
    out = _no_critic(v)
    lr, vlr = v.cfg_float("lr"), v.cfg_float("value_lr")
    if lr and vlr:
        ratio = vlr / lr
        if ratio >= 50:
            out.append(Evidence(0.6, f"value_lr = {_fmt(vlr)} is {ratio:.0f}x the policy lr: the critic may overshoot"))
        elif ratio < 0.5:
            out.append(Evidence(0.4, f"value_lr = {_fmt(vlr)} is below the policy lr {_fmt(lr)}: the critic may lag"))
        elif ratio <= 20:
            out.append(Evidence(-0.3, f"value_lr = {_fmt(vlr)} is {ratio:.2g}x the policy lr"))
    return out


def value_undertrained(v: RunView) -> list[Evidence]:
    out = _no_critic(v)
    ev = v.median("value/explained_var")
    if ev is not None:
        if ev < 0:
            out.append(Evidence(0.6, f"{v.raw('value/explained_var')} median {_fmt(ev)}: the critic is worse than the mean"))
        elif ev > 0.5:
            out.append(Evidence(-0.5, f"{v.raw('value/explained_var')} median {_fmt(ev)}: the critic explains the returns"))
    vf = v.cfg_float("vf_coef")
    if vf is not None and vf < 0.05:
        out.append(Evidence(0.3, f"vf_coef = {_fmt(vf)} gives the value loss little weight"))
    return out


def gae_lambda(v: RunView) -> list[Evidence]:
    out = _no_critic(v)
    lam = v.cfg_float("lam")
    if lam is not None:
        if lam < 0.9:
            out.append(Evidence(0.7, f"GAE lambda = {_fmt(lam)} is below the usual 0.9-1.0"))
        elif lam <= 1.0:
            out.append(Evidence(-0.4, f"GAE lambda = {_fmt(lam)} is in the usual 0.9-1.0"))
    return out


_SAMPLING_KEYS = ("top_k", "top_p", "min_length", "min_new_tokens", "do_sample")


def generation_settings(v: RunView) -> list[Evidence]:
    out = []
    top_k, top_p = v.cfg_float("top_k"), v.cfg_float("top_p")
    if top_k is not None and top_k > 0:
        out.append(Evidence(0.6, f"top_k = {top_k:g}: rollouts are not pure samples from the policy"))
    if top_p is not None and top_p < 1:
        out.append(Evidence(0.4, f"top_p = {_fmt(top_p)}: nucleus sampling truncates the distribution"))
    for key in ("min_length", "min_new_tokens"):
        n = v.cfg_float(key)
        if n is not None and n > 0:
            out.append(Evidence(0.8, f"{key} = {n:g} suppresses EOS until reached"))
    if v.cfg("do_sample") is False:
        out.append(Evidence(0.8, "do_sample = False: greedy/beam rollouts are not samples from the policy"))
    temp = v.cfg_float("temperature")
    regime = temperature_regime(temp)
    if temp is not None and regime == "greedy":
        out.append(Evidence(0.8, f"temperature = {_fmt(temp)} is near-greedy: a group's samples are nearly all the same text"))
    elif temp is not None and regime == "hot":
        out.append(Evidence(0.8, f"temperature = {_fmt(temp)} flattens the policy toward uniform: samples are near-random text"))
    elif temp is not None and temp != 1.0:
        out.append(Evidence(0.2, f"temperature = {_fmt(temp)}: log-probs must be computed at the same temperature"))
    if not out and any(v.has_cfg(k) for k in _SAMPLING_KEYS):
        shown = ", ".join(f"{k}={v.cfg(k)}" for k in _SAMPLING_KEYS if v.has_cfg(k))
        out.append(Evidence(-0.8, f"config shows pure sampling ({shown})"))
    return out


def implementation_bug(v: RunView) -> list[Evidence]:
    out = []
    for metric in ("kl/ref", "kl/old"):
        info = v.run.metric_info.get(metric)
        if info is None or info.estimator not in NONNEGATIVE_ESTIMATORS:
            continue
        vals = v.values(metric)
        if len(vals) and vals.min() < -1e-6:
            out.append(
                Evidence(
                    1.0 if metric == "kl/ref" else 0.8,
                    f"{info.raw_tag} ({info.estimator}, cannot be negative) reaches {_fmt(float(vals.min()))}",
                )
            )
    return out


def response_truncation(v: RunView) -> list[Evidence]:
    clip = v.median("len/response_clip_ratio")
    if clip is None:
        return []
    if clip > 0.3:
        return [Evidence(0.6, f"{v.raw('len/response_clip_ratio')} median {_fmt(clip)}: many responses hit the length cap")]
    if clip < 0.02:
        return [Evidence(-0.5, f"{v.raw('len/response_clip_ratio')} median {_fmt(clip)}: responses end before the cap")]
    return []


EVIDENCE: dict[str, Callable[[RunView], list[Evidence]]] = {
    "kl-coef-too-low": kl_coef_too_low,
    "ent-coef-too-low": ent_coef_too_low,
    "entropy-bonus-too-high": entropy_bonus_too_high,
    "clip-higher-too-wide": clip_higher_too_wide,
    "adaptive-kl-target-too-high": adaptive_kl_target_too_high,
    "lr-too-high": lr_too_high,
    "lr-too-low": lr_too_low,
    "weak-learning-signal": weak_learning_signal,
    "too-many-ppo-epochs": too_many_ppo_epochs,
    "no-lr-annealing": no_lr_annealing,
    "batch-too-large": batch_too_large,
    "no-grad-clipping": no_grad_clipping,
    "policy-not-from-sft": policy_not_from_sft,
    "reward-not-normalized": reward_not_normalized,
    "reward-not-clipped": reward_not_clipped,
    "reward-model-flawed": reward_model_flawed,
    "value-lr-mistuned": value_lr_mistuned,
    "value-undertrained": value_undertrained,
    "gae-lambda": gae_lambda,
    "generation-settings": generation_settings,
    "implementation-bug": implementation_bug,
    "response-truncation": response_truncation,
}


def knob_value(run: Run, knob: str) -> float | None:
    """A knob's value: from the config, or for the learning rate its logged peak."""
    view = RunView(run)
    if knob == "lr":
        return _lr(view)[0]
    return view.cfg_float(knob)


def collect(run: Run, cause_ids: list[str] | None = None) -> dict[str, list[Evidence]]:
    """Evidence per cause id (only causes with something to say appear).  Which causes a run can
    have at all is the catalog's business (``Cause.domains``): a classic-RL run never reaches the
    KL-penalty cause here."""
    view = RunView(run)
    out: dict[str, list[Evidence]] = {}
    wanted = list(EVIDENCE) if cause_ids is None else cause_ids
    for cid in wanted:
        fn = EVIDENCE.get(cid)
        ev = fn(view) if fn is not None else []
        if ev:
            out[cid] = ev
    return out


__all__ = ["Evidence", "EVIDENCE", "collect", "domain", "knob_value"]

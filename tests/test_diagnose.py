"""Diagnosis: the cause catalog covers the guides, and ranking combines findings with config."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor.diagnose import CAUSE_IDS, CAUSES, SYMPTOM_CAUSES, get_cause, rank_causes
from ppo_doctor.results import SYMPTOMS, Finding
from ppo_doctor.frame import RawRun, RawSeries
from ppo_doctor.canonical.metrics import build_run
from ppo_doctor.rules import registry

DESIGN_CAUSES = (
    "kl-coef-too-low lr-too-high too-many-ppo-epochs batch-too-large no-grad-clipping policy-not-from-sft "
    "reward-model-flawed reward-not-normalized reward-not-clipped value-lr-mistuned value-undertrained gae-lambda "
    "generation-settings implementation-bug lr-too-low weak-learning-signal reward-dominated-by-query"
).split()

# Every cause and fix the guides name (docs/sources.md#guides): (what the guide says, cause id,
# phrases the cause's fixes must contain).
DIGEST = [
    ("1. KL coefficient beta too low; raise beta", "kl-coef-too-low", ["0.05-0.2", "adaptive", "target=6"]),
    ("1. adaptive KL controller, tune the target (3-10)", "adaptive-kl-target-too-high", ["about 6", "3-10"]),
    ("1. learning rate too high; lower it", "lr-too-high", ["Lower the policy learning rate"]),
    ("1. batch too large", "batch-too-large", ["Reduce the rollout batch"]),
    ("1. too many PPO epochs; fewer epochs", "too-many-ppo-epochs", ["Reduce PPO epochs", "target_kl"]),
    ("1. gradient clipping", "no-grad-clipping", ["max_grad_norm` 0.5-1.0"]),
    ("1. initial policy must be the SFT model", "policy-not-from-sft", ["SFT checkpoint", "reference"]),
    ("2. reward model poorly calibrated / noisy / hacked; recalibrate or retrain", "reward-model-flawed", ["Recalibrate or retrain", "extreme cases"]),
    ("2. normalise rewards per batch", "reward-not-normalized", ["subtract the mean and divide by the std"]),
    ("2. clip rewards to [-10, 10]", "reward-not-clipped", ["[-10, 10]"]),
    ("2. add repetition or length penalties", "reward-hacking-length", ["length or repetition penalty"]),
    ("3. value LR too high; separate, often higher value LR", "value-lr-mistuned", ["its own learning rate", "higher"]),
    ("3. value undertrained; more value iterations, gradient clipping on the value loss", "value-undertrained", ["more per batch"]),
    ("3. unsuitable value architecture; size like the policy / init from SFT minus last layer", "value-undertrained", ["minus its last layer"]),
    ("3. GAE, tune lambda 0.9-1.0", "gae-lambda", ["0.9-1.0"]),
    ("3. gradient clipping on the value loss", "value-lr-mistuned", ["Clip the value network's gradients"]),
    ("4. bugs in advantages, KL estimate, updates; use a tested library, unit tests", "implementation-bug", ["unit-test", "working example"]),
    ("4. padding and masking mistakes", "implementation-bug", ["padding", "masks"]),
    ("4. wrong generation settings (temperature/top_k/top_p diversity)", "generation-settings", ["temperature"]),
    ("5. negative KL from top-k / min_length; pure sampling kwargs", "generation-settings", ["min_length=-1, top_k=0, top_p=1.0, do_sample=True"]),
    ("5. revert to the recommended kwargs if negative KL persists", "generation-settings", ["revert to these"]),
    ("stalled training: learning signal too weak", "weak-learning-signal", ["frac_reward_zero_std"]),
    ("stalled training: optimisation stalled (LR)", "lr-too-low", ["Raise the learning rate"]),
    ("FAQ: reward dominated by the query; reward(query+response) - reward(query)", "reward-dominated-by-query", ["reward(query + response) - reward(query)"]),
    ("FAQ: check generations for truncation", "response-truncation", ["length cap"]),
    ("FAQ: start from a working example, change one thing at a time, start small", "implementation-bug", ["one thing at a time", "start small"]),
    ("diagnostics: inspect generated text, compare with SFT samples", "reward-model-flawed", ["Inspect generated samples", "SFT model"]),
    ("diagnostics: look at the reward distribution", "reward-model-flawed", ["reward distribution"]),
    ("diagnostics: revert a hyper-parameter change or try intermediate values", "lr-too-high", ["intermediate values"]),
]


# -- catalog -----------------------------------------------------------------------------------
def test_catalog_has_every_design_cause():
    assert set(DESIGN_CAUSES) <= set(CAUSE_IDS)
    assert len(CAUSE_IDS) == len(set(CAUSE_IDS))


@pytest.mark.parametrize("guide_point, cause_id, phrases", DIGEST, ids=[d[0][:40] for d in DIGEST])
def test_catalog_covers_the_guides_digest(guide_point, cause_id, phrases):
    cause = get_cause(cause_id)
    assert cause is not None, guide_point
    text = " ".join(cause.fixes)
    for p in phrases:
        assert p in text, f"{cause_id} fixes lack {p!r} ({guide_point})"


def test_every_cause_is_documented():
    for c in CAUSES:
        assert c.title and len(c.explanation) > 60 and c.fixes and c.source, c.id


def test_symptom_defaults_cover_the_vocabulary_with_known_causes():
    assert set(SYMPTOM_CAUSES) == set(SYMPTOMS)
    for symptom, causes in SYMPTOM_CAUSES.items():
        assert set(causes) <= set(CAUSE_IDS), symptom
        assert all(0 < w <= 1 for w in causes.values())


# -- helpers -----------------------------------------------------------------------------------
def make_run(metrics: dict | None = None, config: dict | None = None, fmt: str = "tensorboard"):
    metrics = metrics or {"objective/kl": np.linspace(0, 30, 50), "objective/scores": np.linspace(0, 3, 50), "loss/value_avg": np.ones(50)}
    raw = RawRun(series=[RawSeries(t, np.arange(len(v)), np.asarray(v, float), source="t") for t, v in metrics.items()], config=config or {})
    return build_run("r", "/r", fmt, ["/r/f"], raw)


def finding(symptom: str, causes: dict | None = None, severity: str = "error", code: str | None = None, metric: str = "kl/ref", start: int = 10) -> Finding:
    """A finding of a real rule: ``code``'s, else the first registered rule of ``symptom``."""
    rule = registry.get(code) if code else next(r for r in registry.all_rules() if r.symptom == symptom)
    return Finding(
        code=rule.code, name=rule.name, symptom=symptom, severity=severity, metric=metric, observes=rule.observes,
        message=f"{symptom} seen", start_step=start, end_step=max(40, start), causes=causes or {},
    )


KL_BLOWUP = {"kl-coef-too-low": 1.0, "lr-too-high": 0.6, "too-many-ppo-epochs": 0.5, "policy-not-from-sft": 0.3}
NEG_KL = {"generation-settings": 1.0, "implementation-bug": 0.5, "reward-model-flawed": 0.2}


def ids(ranked):
    return [c.id for c in ranked]


# -- ranking -------------------------------------------------------------------------------------
def test_no_findings_no_causes():
    assert rank_causes([], make_run(config={"kl_coef": 0.0, "top_k": 50})) == []


def test_clear_single_fault_is_confident_and_first():
    ranked = rank_causes([finding("kl_blowup", KL_BLOWUP)], make_run(config={"kl_coef": 0.001, "learning_rate": 1.41e-5, "num_ppo_epochs": 4}))
    top = ranked[0]
    assert top.id == "kl-coef-too-low" and top.confidence > 0.5
    assert any("0.001" in e for e in top.config_evidence)
    assert top.evidence and "PD101" in top.evidence[0]
    assert top.fixes == list(get_cause("kl-coef-too-low").fixes)
    assert all(0.0 <= c.confidence <= 1.0 for c in ranked)
    assert [c.confidence for c in ranked] == sorted((c.confidence for c in ranked), reverse=True)
    assert ranked[1].confidence < top.confidence


def test_config_moves_kl_blowup_ranking_toward_learning_rate_or_epochs():
    finding_ = [finding("kl_blowup", KL_BLOWUP)]
    healthy_kl = {"kl_coef": 0.2, "num_ppo_epochs": 4}
    assert ids(rank_causes(finding_, make_run(config={**healthy_kl, "learning_rate": 2e-4})))[0] == "lr-too-high"
    ranked = rank_causes(finding_, make_run(config={**healthy_kl, "learning_rate": 1e-5, "num_ppo_epochs": 16}))
    assert ids(ranked)[0] == "too-many-ppo-epochs"
    assert any("ppo_epochs = 16" in e for e in ranked[0].config_evidence)
    kl = next(c for c in ranked if c.id == "kl-coef-too-low")
    assert kl.config_against


def test_generation_settings_gain_with_top_k_and_lose_with_pure_sampling():
    f = [finding("negative_kl", NEG_KL)]
    ranked = rank_causes(f, make_run(config={"generation_kwargs": {"top_k": 50, "min_length": 20, "do_sample": True}}))
    assert ids(ranked)[0] == "generation-settings"
    assert any("top_k = 50" in e for e in ranked[0].config_evidence)
    assert any("min_length = 20" in e for e in ranked[0].config_evidence)
    pure = {"generation_kwargs": {"top_k": 0.0, "top_p": 1.0, "min_length": -1, "do_sample": True}}
    ranked = rank_causes(f, make_run(config=pure))
    assert ids(ranked)[0] == "implementation-bug"
    gen = next(c for c in ranked if c.id == "generation-settings")
    assert gen.config_against and gen.config_against[0].startswith("config shows pure sampling")


def test_config_alone_never_creates_a_cause():
    run = make_run(config={"top_k": 50, "kl_coef": 0.0, "max_grad_norm": None, "learning_rate": 1e-3})
    ranked = rank_causes([finding("value_instability", {"value-undertrained": 1.0})], run)
    assert ids(ranked) == ["value-undertrained"]


def test_learning_rate_judged_by_framework():
    f = [finding("oscillation", {"lr-too-high": 1.0, "too-many-ppo-epochs": 0.9})]
    sb3 = make_run({"rollout/ep_rew_mean": np.ones(20), "train/approx_kl": np.ones(20) * 0.01, "train/entropy_loss": -np.ones(20)},
                   config={"learning_rate": 3e-4, "n_epochs": 10})
    llm = make_run(config={"learning_rate": 3e-4, "num_ppo_epochs": 4})
    lr_sb3 = next(c for c in rank_causes(f, sb3) if c.id == "lr-too-high")
    lr_llm = next(c for c in rank_causes(f, llm) if c.id == "lr-too-high")
    assert lr_sb3.config_against
    assert lr_llm.config_evidence and not lr_llm.config_against
    assert lr_llm.confidence > lr_sb3.confidence
    assert ids(rank_causes(f, llm))[0] == "lr-too-high"
    assert ids(rank_causes(f, sb3))[0] == "too-many-ppo-epochs"


def test_logged_metrics_count_as_evidence():
    # logged KL coefficient of 0 (no config) supports kl-coef-too-low
    metrics = {"objective/kl": np.linspace(0, 40, 30), "objective/kl_coef": np.zeros(30), "ppo/mean_scores": np.ones(30), "ppo/loss/policy": np.zeros(30)}
    top = rank_causes([finding("kl_blowup", KL_BLOWUP)], make_run(metrics))[0]
    assert top.id == "kl-coef-too-low" and any("objective/kl_coef" in e for e in top.config_evidence)
    # a negative KL from an estimator that cannot be negative points at a bug, not generation settings
    grpo = {"kl": np.r_[np.full(10, 1e-3), np.full(10, -0.5)], "reward": np.ones(20), "reward_std": np.ones(20), "frac_reward_zero_std": np.zeros(20)}
    run = make_run(grpo, config={"rloo_k": None, "top_k": 0, "top_p": 1.0})
    run.metric_info["kl/ref"].estimator = "k3"  # as logged by a GRPO build whose KL is k3
    ranked = rank_causes([finding("negative_kl", NEG_KL)], run)
    assert ids(ranked)[0] == "implementation-bug"
    assert any("cannot be negative" in e for e in ranked[0].config_evidence + ranked[0].config_against)


def test_value_causes_lose_without_a_critic():
    grpo = make_run({"reward": np.ones(20), "reward_std": np.ones(20), "frac_reward_zero_std": np.full(20, 0.9), "loss": np.ones(20)})
    assert grpo.framework == "trl_grpo"
    ranked = rank_causes([finding("stagnation", {"value-undertrained": 1.0, "weak-learning-signal": 0.6})], grpo)
    assert ids(ranked)[0] == "weak-learning-signal"
    value = next(c for c in ranked if c.id == "value-undertrained")
    assert any("without a critic" in e for e in value.config_against)


def test_diminishing_returns_for_many_findings_of_one_symptom():
    many = [finding("reward_spike", {"reward-not-clipped": 1.0}, start=10 + i) for i in range(10)]
    two = [finding("value_instability", {"value-undertrained": 1.0}), finding("oscillation", {"value-undertrained": 1.0})]
    ranked = rank_causes(many + two, make_run())
    assert ids(ranked)[0] == "value-undertrained"
    assert len(next(c for c in ranked if c.id == "reward-not-clipped").evidence) == 10


def test_default_causes_when_a_finding_names_none_and_unknown_ids_are_ignored():
    ranked = rank_causes([finding("negative_kl"), finding("nan", {"no-such-cause": 1.0})], make_run())
    assert set(ids(ranked)) == set(SYMPTOM_CAUSES["negative_kl"])
    assert ids(ranked)[0] == "generation-settings"


def test_severity_orders_equal_findings():
    ranked = rank_causes(
        [finding("reward_spike", {"reward-not-clipped": 1.0}, severity="info"),
         finding("gradient_explosion", {"no-grad-clipping": 1.0}, severity="error")],
        make_run(),
    )
    assert ids(ranked) == ["no-grad-clipping", "reward-not-clipped"]


def test_ties_are_deterministic_in_catalog_order():
    f = [finding("oscillation", {"value-undertrained": 0.5, "lr-too-high": 0.5, "batch-too-large": 0.5})]
    run = make_run()
    first = ids(rank_causes(f, run))
    assert first == sorted(first, key=CAUSE_IDS.index)
    assert all(ids(rank_causes(list(reversed(f)), run)) == first for _ in range(3))


def test_policy_not_from_sft_from_config():
    f = [finding("kl_blowup", {"kl-coef-too-low": 0.6, "policy-not-from-sft": 0.5})]
    differ = {"pretrain": "org/llama-sft", "ref_pretrain": "org/llama-base", "init_kl_coef": 0.1, "actor_learning_rate": 5e-7, "ppo_clip_ratio": 1}
    metrics = {"train/kl": np.linspace(5, 6, 20), "train/actor_lr": np.full(20, 5e-7), "train/ppo_clip_ratio": np.zeros(20), "train/reward": np.ones(20)}
    assert ids(rank_causes(f, make_run(metrics, differ)))[0] == "policy-not-from-sft"
    same = {**differ, "ref_pretrain": "org/llama-sft"}
    assert ids(rank_causes(f, make_run(metrics, same)))[0] == "kl-coef-too-low"


def test_to_dict_marks_config_evidence():
    top = rank_causes([finding("gradient_explosion", {"no-grad-clipping": 1.0})], make_run(config={"max_grad_norm": None}))[0]
    d = top.to_dict()
    assert d["id"] == "no-grad-clipping" and 0 < d["confidence"] <= 1
    assert any(e.startswith("config: max_grad_norm = None") for e in d["evidence"])


# -- config evidence strengthens what findings support; samples point at the reward model -------------
def rules_and_causes(example):
    from ppo_doctor.rules.engine import run_rules
    from ppo_doctor.rules.examples import example_run

    run = example_run(example)
    findings, _ = run_rules(run)
    return findings, rank_causes(findings, run)


def exploited_reward(kl_coef: float, texts: bool):
    """The hackable-reward scenario: reward and KL climb, entropy collapses, small updates;
    with samples that spam '!' when ``texts``."""
    from ppo_doctor.rules.base import Example
    from ppo_doctor.rules.examples import PLAIN_SAMPLES, decay, flat, saturating

    n = 120
    spam = "Great ! ! ! ! ! ! ! ! ! ! ! ! ! ! !"
    return Example(
        series={
            "reward/score": saturating(n, 0.5, 4.9, sd=0.1, seed=1),
            "kl/ref": saturating(n, 0.5, 40.0, sd=0.5, seed=2),
            "policy/entropy": decay(n, 1.56, 0.14, sd=0.02, seed=3),
            "kl/old": np.abs(flat(n, 5e-4, 1e-4, seed=5)),
            "policy/clipfrac": np.abs(flat(n, 2e-3, 5e-4, seed=6)),
        },
        config={"kl_coef": kl_coef, "lr": 1e-4, "ppo_epochs": 4, "num_mini_batches": 2},
        metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        texts=[(1, t) for t in PLAIN_SAMPLES] + [(120, spam)] * 4 if texts else [],
    )


def test_degenerate_samples_with_a_usual_kl_coef_point_at_the_reward_model():
    findings, ranked = rules_and_causes(exploited_reward(0.05, texts=True))
    assert {f.code for f in findings} >= {"PD101", "PD202", "PD951", "PD953"}
    assert ids(ranked)[0] == "reward-model-flawed"
    kl = next(c for c in ranked if c.id == "kl-coef-too-low")
    assert any("usual fixed value" in e for e in kl.config_against)
    # ... but this run's reward outpaid it (about 4.4 reward over 24.5 nats): said, not weighed
    assert any("too low for this run's reward scale" in e for e in kl.config_evidence)
    lr = next(c for c in ranked if c.id == "lr-too-high")
    assert any(e.startswith("the logged updates stay small") for e in lr.config_against)
    assert ids(ranked).index("lr-too-high") > 2  # a high-looking config rate alone does not climb the ranking


def test_without_samples_or_with_no_kl_penalty_the_kl_coefficient_leads():
    # the KL sweep's author labelled such runs "beta too low": only reward and KL curves, no samples
    assert ids(rules_and_causes(exploited_reward(0.05, texts=False))[1])[0] == "kl-coef-too-low"
    assert ids(rules_and_causes(exploited_reward(0.0, texts=True))[1])[0] == "kl-coef-too-low"


def test_samples_are_an_independent_kind_of_evidence():
    metric = finding("reward_hacking", {"reward-model-flawed": 1.0}, code="PD202")
    text = finding("reward_hacking", {"reward-model-flawed": 1.0}, code="PD951", metric="texts")
    other = finding("kl_blowup", {"kl-coef-too-low": 1.0}, code="PD101")
    # two reward_hacking findings from the metrics share diminishing returns and lose to two symptoms ...
    assert ids(rank_causes([metric, metric, other, finding("entropy_collapse", {"kl-coef-too-low": 1.0})], make_run()))[0] == "kl-coef-too-low"
    # ... but a finding in the samples adds up fully with one in the metrics
    both = rank_causes([metric, text, other], make_run())
    assert ids(both)[0] == "reward-model-flawed"
    # the kind of observation is the finding's own field (a text rule's findings observe the texts)
    assert text.observes == "texts" and metric.observes == "metrics"
    same_kind = rank_causes([metric, metric], make_run())[0]
    two_kinds = rank_causes([metric, text], make_run())[0]
    assert two_kinds.id == same_kind.id == "reward-model-flawed" and two_kinds.confidence > same_kind.confidence


def test_small_logged_updates_weigh_against_a_high_looking_learning_rate():
    f = [finding("kl_blowup", KL_BLOWUP)]
    config = {"kl_coef": 0.2, "num_ppo_epochs": 4, "learning_rate": 2e-4}
    # measured small updates (noisy, not one exact value: a constant column while the reward
    # moves is a placeholder, ppo_doctor.view.placeholder)
    rng = np.random.default_rng(0)
    small = {"objective/kl": np.linspace(0, 30, 50), "objective/scores": np.linspace(0, 3, 50), "loss/value_avg": np.ones(50),
             "policy/approxkl_avg": 1e-3 * (1 + 0.1 * rng.random(50)), "policy/clipfrac_avg": 5e-3 * (1 + 0.1 * rng.random(50))}
    ranked = rank_causes(f, make_run(small, config))
    assert ids(ranked)[0] == "kl-coef-too-low"
    # a clip fraction that is exactly 0 throughout is what one update per batch logs: no evidence
    zero = {**small, "policy/clipfrac_avg": np.zeros(50)}
    del zero["policy/approxkl_avg"]
    ranked = rank_causes(f, make_run(zero, config))
    assert ids(ranked)[0] == "lr-too-high"
    assert not any("stay small" in e for e in ranked[0].config_evidence)


# -- gradient explosion without clipping ---------------------------------------------------------------
def unclipped_run(max_grad_norm):
    """A synthetic unclipped run (the shape of the dropped no-grad-clip-high-lr scenario): lr 3e-3, the gradient norm explodes from step 60 and the
    updates (approx KL, clip fraction, one ratio of 17) and the KL follow."""
    from ppo_doctor.rules.base import Example
    from ppo_doctor.rules.examples import flat, saturating, with_points

    n = 120
    g = np.abs(flat(n, 0.8, 0.15, seed=1))
    g[60:] = np.geomspace(2, 400, 60)
    series = {
        "grad/norm": g,
        "kl/ref": np.r_[saturating(60, 0.0, 5.0, sd=0.5, seed=2), np.geomspace(6, 150, 60)],
        "reward/score": np.r_[saturating(60, 0.2, 0.9, sd=0.05, seed=3), np.linspace(0.9, 0.0, 60)],
        "kl/old": np.r_[flat(60, 0.02, 0.005, seed=4), flat(60, 0.3, 0.1, seed=5)],
        "policy/clipfrac": np.r_[flat(60, 0.1, 0.02, seed=6), flat(60, 0.35, 0.05, seed=7)],
        "policy/ratio_mean": with_points(flat(n, 1.0, 0.01, seed=8), {90: 17.0}),
    }
    config = {"lr": 3e-3, "max_grad_norm": max_grad_norm, "kl_coef": 0.05, "ppo_epochs": 4, "num_mini_batches": 2}
    return Example(series=series, config=config, metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}})


def test_unclipped_gradient_explosion_ranks_no_grad_clipping_first():
    findings, ranked = rules_and_causes(unclipped_run(None))
    assert {"gradient_explosion", "kl_blowup"} <= {f.symptom for f in findings}
    assert ids(ranked)[:2] == ["no-grad-clipping", "lr-too-high"]
    ratio = next(f for f in findings if f.code == "PD801")
    assert ratio.causes["no-grad-clipping"] > 0 and any("nothing bounded these updates" in e for e in ratio.evidence)


def test_with_clipping_on_the_same_run_points_at_the_learning_rate():
    findings, ranked = rules_and_causes(unclipped_run(1.0))
    assert ids(ranked)[0] == "lr-too-high"
    assert all("no-grad-clipping" not in f.causes or f.causes["no-grad-clipping"] <= 0.5 for f in findings)


# -- causes that need a reference model do not apply to classic RL ------------------------------------
def test_classic_rl_cannot_blame_a_kl_penalty_or_generation_settings():
    sb3 = make_run({"rollout/ep_rew_mean": np.ones(20), "train/approx_kl": np.full(20, 0.01), "train/entropy_loss": -np.ones(20)},
                   config={"learning_rate": 3e-4, "n_epochs": 10})
    f = [finding("entropy_collapse", {"kl-coef-too-low": 0.6, "lr-too-high": 0.6, "reward-model-flawed": 0.4, "generation-settings": 0.4})]
    ranked = rank_causes(f, sb3)
    # an SB3 run has no KL penalty, generated text or reward model: those causes are not offered,
    # and the symptom's classic-RL causes take their place (tests/test_causes_by_domain.py)
    assert not {"kl-coef-too-low", "generation-settings", "reward-model-flawed"} & set(ids(ranked))
    assert {"ent-coef-too-low", "lr-too-high"} <= set(ids(ranked))


# -- a KL that is high before any update points at the initialisation --------------------------------
def test_kl_above_band_from_the_first_point_points_at_the_initialisation():
    from ppo_doctor.rules.base import Example
    from ppo_doctor.rules.examples import decay, flat, ramp

    info = {"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}}
    config = {"kl_coef": 0.05, "lr": 1e-4}
    # policy not from SFT: 80 nats at the first rollout, drifting down toward the band
    findings, ranked = rules_and_causes(Example(series={"kl/ref": decay(120, 80.0, 10.0, sd=2.0, seed=1)}, config=config, metric_info=info))
    assert ids(ranked)[0] == "policy-not-from-sft"
    blowup = next(f for f in findings if f.code == "PD101")
    assert max(blowup.causes, key=blowup.causes.get) == "policy-not-from-sft"
    # a learning rate so high that the first update jumps: 0 at the first rollout, then 120
    jump = np.r_[0.0, flat(119, 120.0, 3.0, seed=2)]
    findings, _ = rules_and_causes(Example(series={"kl/ref": jump}, config=config, metric_info=info))
    assert "PD102" not in {f.code for f in findings}
    blowup = next(f for f in findings if f.code == "PD101")
    assert "policy-not-from-sft" not in blowup.causes
    # a KL that climbs from 0 is the ordinary blow-up
    findings, _ = rules_and_causes(Example(series={"kl/ref": ramp(120, 0.0, 40.0, sd=1.0, seed=3)}, config=config, metric_info=info))
    assert "PD102" not in {f.code for f in findings}
    blowup = next(f for f in findings if f.code == "PD101")
    assert max(blowup.causes, key=blowup.causes.get) == "kl-coef-too-low"

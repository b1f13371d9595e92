"""Diagnosis: the cause catalog covers the guides, and ranking combines findings with config."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor.diagnose import CAUSE_IDS, CAUSES, SYMPTOM_CAUSES, get_cause, rank_causes
from ppo_doctor.findings import SYMPTOMS, Finding
from ppo_doctor.frame import RawRun, RawSeries
from ppo_doctor.metrics import build_run

DESIGN_CAUSES = (
    "kl-coef-too-low lr-too-high too-many-ppo-epochs batch-too-large no-grad-clipping policy-not-from-sft "
    "reward-model-flawed reward-not-normalized reward-not-clipped value-lr-mistuned value-undertrained gae-lambda "
    "generation-settings implementation-bug lr-too-low weak-learning-signal reward-dominated-by-query"
).split()

# Every cause and fix of guides-digest.md "Causes and fixes": (what the guide says, cause id,
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


def finding(symptom: str, causes: dict | None = None, severity: str = "error", code: str = "PD100", metric: str = "kl/ref") -> Finding:
    return Finding(
        code=code, name=f"{symptom}-rule", symptom=symptom, severity=severity, metric=metric,
        message=f"{symptom} seen", start_step=10, end_step=40, causes=causes or {},
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
    assert top.evidence and "PD100" in top.evidence[0]
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
    assert any(e.startswith("against:") for e in kl.config_evidence)


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
    assert gen.config_evidence and gen.config_evidence[0].startswith("against: config shows pure sampling")


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
    assert lr_sb3.config_evidence[0].startswith("against:")
    assert not lr_llm.config_evidence[0].startswith("against:")
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
    assert any("cannot be negative" in e for e in ranked[0].config_evidence)


def test_value_causes_lose_without_a_critic():
    grpo = make_run({"reward": np.ones(20), "reward_std": np.ones(20), "frac_reward_zero_std": np.full(20, 0.9), "loss": np.ones(20)})
    assert grpo.framework == "trl_grpo"
    ranked = rank_causes([finding("stagnation", {"value-undertrained": 1.0, "weak-learning-signal": 0.6})], grpo)
    assert ids(ranked)[0] == "weak-learning-signal"
    value = next(c for c in ranked if c.id == "value-undertrained")
    assert any("without a critic" in e for e in value.config_evidence)


def test_diminishing_returns_for_many_findings_of_one_symptom():
    many = [finding("reward_spike", {"reward-not-clipped": 1.0}, code=f"PD2{i:02d}") for i in range(10)]
    two = [finding("value_instability", {"value-undertrained": 1.0}), finding("oscillation", {"value-undertrained": 1.0}, code="PD500")]
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

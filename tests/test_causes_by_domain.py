"""Causes and fixes fit the run (issue 25): a classic-RL run gets classic-RL causes and fixes in its
framework's arguments, an LLM run keeps its own, GRPO's reward comes from reward functions; no fix
reads as the continuation of a dropped one; a first cause whose config argues against it says why."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor.canonical.metrics import build_run
from ppo_doctor.diagnose import CAUSES, rank_causes
from ppo_doctor.diagnose.catalog import CLASSIC_SYMPTOM_CAUSES, SYMPTOM_CAUSES, causes_in_domain, get_cause
from ppo_doctor.diagnose.domains import CLASSIC_ARGS, cause_domain, classic_flavour, render_classic
from ppo_doctor.frame import RawRun, RawSeries
from ppo_doctor.results import SYMPTOMS, Finding
from ppo_doctor.rules import registry
from ppo_doctor.view import RunView

N = 60
TRAINING_SYMPTOMS = [s for s in SYMPTOMS if s != "log_quality"]  # data problems name no cause
LLM_WORDS = ("TRL", "OpenRLHF", "veRL", "reward model", "SFT", "reference", "KL coefficient", "prompt", "token")


def make_run(metrics: dict[str, np.ndarray], config: dict | None = None):
    raw = RawRun(series=[RawSeries(t, np.arange(len(v)), np.asarray(v, float), source="t") for t, v in metrics.items()], config=config or {})
    return build_run("r", "/r", "tensorboard", ["/r/f"], raw)


def sb3_run(config: dict | None = None):
    return make_run(
        {
            "rollout/ep_rew_mean": np.linspace(-100, -90, N),
            "train/value_loss": np.linspace(10, 2e4, N),
            "train/entropy_loss": -np.linspace(7.0, 0.1, N),
            "train/approx_kl": np.full(N, 0.01),
        },
        config,
    )


def cleanrl_run():
    return make_run({"charts/episodic_return": np.linspace(0, 10, N), "losses/value_loss": np.ones(N), "losses/entropy": np.ones(N), "losses/approx_kl": np.full(N, 0.01)})


def baselines_run():
    return make_run({"eprewmean": np.linspace(0, 10, N), "value_loss": np.ones(N), "policy_entropy": np.ones(N), "approxkl": np.full(N, 0.01), "serial_timesteps": np.arange(N)})


def gym_loop_run():
    """A home-made gym PPO loop: an episode return under a generic name, nothing else telling."""
    return make_run({"episode_reward": np.linspace(0, 10, N), "value_loss": np.ones(N), "entropy": np.ones(N)})


def trl_run(config: dict | None = None, kl=None, score=None):
    kl = np.linspace(0, 30, N) if kl is None else kl
    score = np.linspace(0, 3, N) if score is None else score
    return make_run({"objective/kl": kl, "objective/scores": score, "loss/value_avg": np.ones(N), "objective/entropy": np.linspace(5, 1, N)}, config)


def grpo_run():
    return make_run({"reward": np.linspace(0, 1, N), "reward_std": np.full(N, 0.3), "frac_reward_zero_std": np.full(N, 0.2), "kl": np.linspace(0, 0.1, N)})


def finding(symptom: str, rule=None) -> Finding:
    """A finding of ``rule`` (the first registered rule of ``symptom`` by default) with its own causes."""
    rule = rule or next(r for r in registry.all_rules() if r.symptom == symptom)
    return Finding(
        code=rule.code, name=rule.name, symptom=symptom, severity="warning", metric="reward/score", observes=rule.observes,
        message=f"{symptom} seen", start_step=10, end_step=40, causes=dict(rule.causes),
    )


def ids(ranked):
    return [c.id for c in ranked]


# -- which kind of run ---------------------------------------------------------------------------------
def test_the_kind_of_run_is_read_from_the_run_view():
    assert cause_domain(RunView(sb3_run())) == "classic"
    assert cause_domain(RunView(cleanrl_run())) == "classic"
    # logs of unknown trainers with classic-RL episode returns: classic for causes (the view keeps them unknown)
    for run in (baselines_run(), gym_loop_run()):
        assert RunView(run).domain == "unknown" and cause_domain(RunView(run)) == "classic"
    assert cause_domain(RunView(trl_run())) == "rlhf"
    assert cause_domain(RunView(grpo_run())) == "grpo"
    assert cause_domain(RunView(make_run({"loss": np.ones(N)}))) == "unknown"


def test_fixes_name_the_arguments_of_the_framework_the_run_came_from():
    assert classic_flavour(RunView(sb3_run())) == "sb3"
    assert classic_flavour(RunView(cleanrl_run())) == "cleanrl"
    assert classic_flavour(RunView(baselines_run())) == "baselines"
    assert classic_flavour(RunView(gym_loop_run())) is None
    fix = "raise {ent_coef}"
    assert render_classic(fix, "sb3") == "raise SB3 `ent_coef`"
    assert render_classic(fix, "cleanrl") == "raise CleanRL `--ent-coef`"
    # unknown trainer: all three
    assert render_classic(fix, None) == "raise SB3 `ent_coef`, CleanRL `--ent-coef`, baselines `ent_coef`"


@pytest.mark.parametrize("flavour", ["sb3", "sb2", "cleanrl", "baselines", None])
def test_every_classic_fix_renders_in_every_framework(flavour):
    for c in CAUSES:
        if not c.applies_to("classic"):
            continue
        for fx in c.in_domain("classic").fixes:
            text = render_classic(fx, flavour)
            assert "{" not in text and "}" not in text, (c.id, text)
    assert all(set(spellings) == {"sb3", "sb2", "cleanrl", "baselines"} for spellings in CLASSIC_ARGS.values())


# -- every symptom keeps a cause in every kind of run ----------------------------------------------
@pytest.mark.parametrize("domain", ["classic", "rlhf", "grpo", "unknown"])
def test_every_symptom_and_rule_keeps_a_cause_in_every_domain(domain):
    assert set(CLASSIC_SYMPTOM_CAUSES) == set(SYMPTOM_CAUSES)
    for symptom in TRAINING_SYMPTOMS:
        got = causes_in_domain({}, symptom, domain)
        assert got and all(get_cause(c).applies_to(domain) for c in got), (symptom, domain)
    for rule in registry.all_rules():
        if rule.symptom == "log_quality":
            continue
        got = causes_in_domain(dict(rule.causes), rule.symptom, domain)
        assert got and all(get_cause(c).applies_to(domain) for c in got), (rule.code, domain)


# -- classic-RL runs get classic causes and fixes, with SB3 names ----------------------------------
@pytest.mark.parametrize("symptom", TRAINING_SYMPTOMS)
def test_a_classic_run_gets_classic_causes_and_sb3_fixes_for_every_symptom(symptom):
    ranked = rank_causes([finding(symptom)], sb3_run())
    assert ranked, symptom
    for c in ranked:
        assert get_cause(c.id).applies_to("classic"), (symptom, c.id)
        text = " ".join([c.title, c.explanation, *c.fixes])
        assert not any(w in text for w in LLM_WORDS), (symptom, c.id, text)
        assert "CleanRL `--" not in " ".join(c.fixes), "an SB3 run is told SB3's arguments only"
    named = [fx for c in ranked for fx in c.fixes if "SB3 `" in fx]
    assert named, (symptom, [c.fixes for c in ranked])


def test_sb3_value_loss_is_told_vecnormalize_not_whiten_rewards():
    value = finding("value_instability", registry.get("PD401"))
    top = next(c for c in rank_causes([value], sb3_run()) if c.id == "reward-not-normalized")
    assert top.title == "Observations or rewards not normalised"
    assert "SB3 `VecNormalize(env, norm_obs=True, norm_reward=True)`" in top.fixes[0]
    assert not any("whiten_rewards" in fx or "normalize_reward" in fx for fx in top.fixes)


def test_sb3_entropy_collapse_points_at_the_entropy_bonus_not_a_reward_model():
    ranked = rank_causes([finding("entropy_collapse", registry.get("PD701"))], sb3_run({"ent_coef": 0.0}))
    assert ids(ranked)[0] == "ent-coef-too-low"
    assert any("no entropy bonus" in e for e in ranked[0].config_evidence)
    assert ranked[0].fixes[0].startswith("Add or raise the entropy bonus (SB3 `ent_coef`)")
    assert not {"reward-model-flawed", "kl-coef-too-low"} & set(ids(ranked))
    # an entropy bonus already at 0.01: the raise is not offered, and the evidence says so
    bonus = next(c for c in rank_causes([finding("entropy_collapse", registry.get("PD701"))], sb3_run({"ent_coef": 0.01})) if c.id == "ent-coef-too-low")
    assert not any(fx.startswith("Add or raise") for fx in bonus.fixes)
    assert any("0.01 or more" in e for e in bonus.config_against)


def test_other_classic_trainers_are_told_their_own_arguments():
    f = [finding("entropy_collapse", registry.get("PD701"))]
    assert rank_causes(f, cleanrl_run())[0].fixes[0].startswith("Add or raise the entropy bonus (CleanRL `--ent-coef`)")
    epochs = next(c for c in rank_causes([finding("unstable_updates")], baselines_run()) if c.id == "too-many-ppo-epochs")
    assert "baselines `noptepochs`" in epochs.fixes[0] and "baselines `nminibatches`" in epochs.fixes[0]
    lr = next(c for c in rank_causes([finding("unstable_updates")], gym_loop_run()) if c.id == "lr-too-high")
    assert "SB3 `learning_rate`, CleanRL `--learning-rate`, baselines `lr`" in lr.fixes[0]


# -- LLM runs keep their own -----------------------------------------------------------------------
def test_an_llm_run_keeps_its_causes_and_fixes():
    ranked = rank_causes([finding("entropy_collapse", registry.get("PD701"))], trl_run({"kl_coef": 0.001}))
    assert ids(ranked)[0] == "kl-coef-too-low"
    assert "ent-coef-too-low" not in ids(ranked)
    flawed = next(c for c in ranked if c.id == "reward-model-flawed")
    assert flawed.title == get_cause("reward-model-flawed").title and "reward model" in flawed.title.lower()
    value = next(c for c in rank_causes([finding("value_instability", registry.get("PD401"))], trl_run()) if c.id == "reward-not-normalized")
    assert value.fixes == list(get_cause("reward-not-normalized").fixes)
    assert "VecNormalize" not in " ".join(value.fixes)


def test_grpo_reward_comes_from_reward_functions():
    ranked = rank_causes([finding("reward_hacking", registry.get("PD202"))], grpo_run())
    flawed = next(c for c in ranked if c.id == "reward-model-flawed")
    assert flawed.title == "Reward function miscalibrated, noisy or exploitable"
    assert "reward function" in flawed.fixes[0] and "reward model" not in flawed.title


# -- no fix reads as the continuation of a dropped one ----------------------------------------------
CONTINUATIONS = ("Or ", "or ", "Alternatively", "Also", "Otherwise", "Then ", "If not")


def test_no_fix_in_any_domain_reads_as_a_continuation():
    for c in CAUSES:
        for domain in ("classic", "rlhf", "grpo", "unknown"):
            for fx in c.in_domain(domain).fixes:
                assert not fx.startswith(CONTINUATIONS), (c.id, domain, fx)


# -- a usual beta that the run's own reward outpaid --------------------------------------------------
def beta_run(beta: float):
    """The KL sweep's shape: reward 1.4 -> 11 while the sequence KL climbs 5 -> 37 nats (0.3 per nat)."""
    return trl_run({"kl_coef": beta}, kl=np.linspace(5, 37, N), score=np.linspace(1.4, 11, N))


def test_a_usual_beta_outpaid_by_the_reward_is_still_told_to_rise():
    blowup = finding("kl_blowup", registry.get("PD101"))
    top = rank_causes([blowup], beta_run(0.05))[0]
    assert top.id == "kl-coef-too-low"
    assert top.fixes[0].startswith("Raise the initial KL coefficient") and "toward 0.2" in top.fixes[0]
    assert any("usual fixed value" in e for e in top.config_against)
    assert any("too low for this run's reward scale" in e and "per nat, above beta" in e for e in top.config_evidence)
    # a beta above what a nat of drift earned is not called too low for the reward scale
    firm = next(c for c in rank_causes([blowup], beta_run(0.5)) if c.id == "kl-coef-too-low")
    assert not any("reward scale" in e for e in firm.config_evidence)
    # at 0.2 or more the raise is not offered, and the first fix shown stands on its own
    kl = next(c for c in rank_causes([blowup], beta_run(0.2)) if c.id == "kl-coef-too-low")
    assert kl.fixes[0].startswith("Use an adaptive KL controller")
    assert any("already sits at or beyond the 0.2" in e for e in kl.config_against)


def test_a_first_cause_with_its_config_against_it_says_why_it_leads():
    # beta 0.2 argues against kl-coef-too-low; the findings still back it most
    blowup = finding("kl_blowup", registry.get("PD101"))
    ranked = rank_causes([blowup], trl_run({"kl_coef": 0.2}))
    top = ranked[0]
    assert top.id == "kl-coef-too-low" and top.config_against
    assert top.evidence[0].startswith("first although its config evidence weighs against it on balance: the findings back it")
    assert ranked[1].id in top.evidence[0]
    # a first cause its config does not argue against needs no such note
    clean = rank_causes([blowup], trl_run({"kl_coef": 0.001}))[0]
    assert clean.id == "kl-coef-too-low" and not any(e.startswith("first although") for e in clean.evidence)
    # nor does any other cause
    assert not any(e.startswith("first although") for c in ranked[1:] for e in c.evidence)

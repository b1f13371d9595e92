"""One read-only view of a run (issue 23): the rules and the diagnosis read a run one way."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor.config import coerce
from ppo_doctor.canonical.design import CRITIC_FREE_FRAMEWORKS
from ppo_doctor.diagnose import evidence
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, noise
from ppo_doctor.view import RunView
from ppo_doctor.view.returns import ReturnsView


def _run(series, config=None, framework="trl"):
    return example_run(Example(series=series, config=config or {}, framework=framework))


def test_config_readers_one_per_kind():
    view = RunView(_run({"reward/score": flat(30, 1.0)}, {"lr": "1e-5", "ppo_epochs": 4.0, "do_sample": "false", "adv_estimator": "grpo", "kl_coef": True}))
    assert view.cfg_float("lr") == pytest.approx(1e-5)  # strings as YAML and MLflow leave them
    assert view.cfg_int("ppo_epochs") == 4
    assert view.cfg_bool("do_sample") is False
    assert view.cfg_str("adv_estimator") == "grpo"
    assert view.cfg_float("kl_coef") is None  # a boolean is not a number
    assert view.cfg("missing", "lr") == "1e-5"  # the first key that is set


@pytest.mark.parametrize("framework", sorted(CRITIC_FREE_FRAMEWORKS))
def test_every_critic_free_framework_has_no_critic(framework):
    """The diagnosis used its own inline list, which missed TRL's AsyncGRPOTrainer and
    OnlineDPOTrainer; the view reads design's one list."""
    assert RunView(_run({"reward/score": flat(30, 1.0)}, framework=framework)).has_critic() is False


def test_a_logged_value_metric_means_a_critic_whatever_the_framework():
    run = _run({"reward/score": flat(30, 1.0), "grad/norm_critic": flat(30, 1.0)}, framework="trl_grpo")
    assert RunView(run).has_critic() is True
    assert RunView(_run({"reward/score": flat(30, 1.0)}, framework="trl")).has_critic() is None


def test_rules_and_diagnosis_see_the_same_domain_and_knobs():
    run = _run({"reward/score": flat(30, 1.0), "opt/lr": flat(30, 3e-4)}, {"ppo_epochs": "10"}, framework="sb3")
    assert RunView(run).domain == "classic"
    assert evidence.knob_value(run, "ppo_epochs") == RunView(run).cfg_float("ppo_epochs") == 10.0


def test_kl_view_is_computed_once_and_bands_are_the_rules_own():
    view = RunView(_run({"kl/ref": flat(30, 2.0)}))
    assert view.kl is view.kl
    assert view.kl_in(10.0, 0.3) is view.kl  # the default bands share the cached view
    assert view.kl_in(5.0, 0.1).band == 5.0  # reduction unknown: the sequence band


def _rise_then_fall(n=200, seed=0):
    """A reward that climbs 0 -> 1 over the first 60 steps, holds, and falls back to 0.15
    from step 120: 85 % of its gain lost."""
    x = np.concatenate([np.linspace(0.0, 1.0, 60), np.full(60, 1.0), np.full(n - 120, 0.15)])
    return x + noise(n, 0.02, seed)


def test_pd301_judges_a_collapse_with_reward_collapses_configured_settings():
    """A rule's parameters always come from the resolved config: PD301 used to read PD204's
    class defaults, so ``[rules.reward-collapse]`` never reached it."""
    run = _run({"reward/score": _rise_then_fall()})
    codes = {f.code for f in run_rules(run)[0]}
    assert "PD204" in codes and "PD301" not in codes  # it improved, then lost it: a collapse
    # with collapses judged only on runs of 500 points or more, this one is not judged a collapse ...
    strict = {"rules": {"reward-collapse": {"min_points": 500}}}
    codes = {f.code for f in run_rules(run, coerce(strict))[0]}
    assert "PD204" not in codes
    # ... so PD301 no longer excuses it as one: first and last windows level, no progress
    assert "PD301" in codes


def test_constant_at_is_np_isin_on_sorted_steps():
    """ReturnsView.constant_at looks steps up in its sorted ``constant`` steps (np.isin may sort
    through the plain np.unique, which imports numpy.ma: benchmarks/RESULTS.md "One small
    check"); the mask is np.isin's, repeated steps, misses at both ends and no constant step
    included."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        constant = np.sort(rng.integers(0, 50, size=int(rng.integers(0, 20))))
        steps = np.sort(rng.integers(-5, 60, size=int(rng.integers(0, 30))))
        mask = ReturnsView(constant, "", np.empty(0, dtype=np.int64), None, "").constant_at(steps)
        assert mask.dtype == bool and np.array_equal(mask, np.isin(steps, constant))

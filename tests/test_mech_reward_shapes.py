"""Reward shapes that real classic-RL and GRPO logs have and that the reward rules must read by
their mechanism (issue 25): one point per episode (time is steps, not points), a sparse reward
that sits on one value (sticky), a rolling mean that moves in steps of one episode (quantum) and
starts on a few episodes, a reward that only fell to its floor, and a run that died of NaN
(judged where it stands).  Every series is synthetic and seeded."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ppo_doctor.detect import at_changes, even_in_steps, oscillation, peak_drop, quantum, sticky, summarize
from ppo_doctor.monitor import replay
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run
from ppo_doctor.rules.reward_progress import rise


def _codes(example: Example, *, planned: int | None = None, live: bool = False) -> dict[str, str]:
    """Rule code -> severity of every finding on the example's run."""
    run = example_run(example)
    if planned is not None or live:
        run = dataclasses.replace(run, planned_steps=planned, planned_from="test" if planned else "", live=live)
    findings, _ = run_rules(run)
    return {f.code: f.severity for f in findings}


def _episodes(rng: np.random.Generator, phases: list[tuple[int, float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """One point per finished episode, at the step it ended: ``phases`` of (steps, mean return,
    sd), each episode as long as its return (a CartPole return is its length, at least 5)."""
    steps, values, t = [], [], 0
    for length, mean, sd in phases:
        end = t + length
        while t < end:
            r = float(np.clip(rng.normal(mean, sd), 5, 500))
            t += int(r)
            steps.append(t)
            values.append(r)
    return np.asarray(steps, dtype=np.int64), np.asarray(values)


def _cartpole(seed: int, collapse: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    phases = [(20_000, 20, 8), (40_000, 150, 60), (300_000, 500, 0)]
    phases.append((150_000, 7, 1) if collapse else (150_000, 500, 0))
    return _episodes(rng, phases)


# -- time is steps, not points --------------------------------------------------------------
def test_evenly_logged_series_are_judged_as_they_are():
    s = np.arange(0, 200_000, 2048, dtype=np.int64)
    v = np.random.default_rng(1).normal(0, 1, len(s))
    s2, v2 = even_in_steps(s, v)
    assert s2 is s and v2 is v


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_collapse_logged_one_point_per_episode_is_a_collapse_not_a_flat_run(seed):
    s, v = _cartpole(seed, collapse=True)
    # in points the collapsed stretch dominates: its short episodes write most of the log
    assert np.mean(v < 20) > 0.6
    s2, v2 = even_in_steps(s, v)
    assert len(v2) < len(v) and np.all(np.diff(s2) > 0)
    codes = _codes(Example(series={"reward/score": (s, v)}, framework="cleanrl"))
    assert codes.get("PD204") == "error" and "PD301" not in codes


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_solved_run_logged_one_point_per_episode_is_healthy(seed):
    s, v = _cartpole(seed, collapse=False)
    codes = _codes(Example(series={"reward/score": (s, v)}, framework="cleanrl"))
    assert "PD204" not in codes and "PD301" not in codes


# -- a sparse reward sitting on one value ---------------------------------------------------
def _sparse(seed: int, n: int = 90, p_late: float = 0.3) -> np.ndarray:
    """A GRPO reward that is exactly 0 on most steps, with rare negative departures (format
    penalties) at the same rate from start to end."""
    rng = np.random.default_rng(seed)
    hit = rng.random(n) < p_late
    return np.where(hit, -np.abs(rng.normal(0.15, 0.12, n)), 0.0)


def test_a_sparse_reward_stuck_at_its_floor_is_stagnation_not_oscillation():
    seeds = range(20)
    stagnant = 0
    for seed in seeds:
        v = _sparse(seed)
        assert sticky(v)
        assert oscillation(np.arange(len(v)), v).swings == 0
        codes = _codes(Example(series={"reward/score": v}))
        assert "PD501" not in codes
        stagnant += codes.get("PD301") == "warning"
    # the first and last windows hold 9 points each: by chance alone one run in twenty or so
    # looks like a 2-s.e. rise (PD301's threshold), so most, not all, are called stagnant
    assert stagnant >= 0.8 * len(seeds)


@pytest.mark.parametrize("seed", range(4))
def test_a_sticky_success_rate_that_rises_is_progress(seed):
    rng = np.random.default_rng(seed)
    p = np.linspace(0.05, 0.8, 120)
    v = (rng.random(120) < p).astype(float)  # a success rate of one sample per step: 0 or 1
    assert sticky(v) or np.mean(v) > 0.4
    codes = _codes(Example(series={"reward/score": v}))
    assert "PD301" not in codes and "PD204" not in codes


# -- a rolling mean over 100 episodes -------------------------------------------------------
def _rolling_mean(returns: np.ndarray, episodes_per_point: int, window: int = 100) -> np.ndarray:
    """SB3's ``rollout/ep_rew_mean``: the mean of the last ``window`` episodes, logged after
    every ``episodes_per_point`` episodes (fewer than ``window`` at the start)."""
    c = np.concatenate([[0.0], np.cumsum(returns)])
    ends = np.arange(episodes_per_point, len(returns) + 1, episodes_per_point)
    starts = np.maximum(0, ends - window)
    return (c[ends] - c[starts]) / (ends - starts)


@pytest.mark.parametrize("seed", range(4))
def test_a_rare_success_coming_and_going_in_a_rolling_mean_is_no_collapse(seed):
    # a Tetris-like agent: episodes almost never clear a line (return 1), a little more often
    # for a while; the 100-episode mean moves in steps of 0.01
    rng = np.random.default_rng(seed)
    p = np.r_[np.full(2500, 0.0005), np.full(1000, 0.015), np.full(2500, 0.0005)]
    v = np.round(_rolling_mean((rng.random(len(p)) < p).astype(float), 100), 6)
    assert quantum(v) == pytest.approx(0.01)
    codes = _codes(Example(series={"reward/score": v}, framework="sb3"))
    assert "PD204" not in codes


def test_a_real_collapse_in_a_rolling_mean_is_still_one():
    rng = np.random.default_rng(7)
    returns = np.r_[np.linspace(-200, 250, 3000), np.full(3000, 250.0), np.full(3000, -150.0)] + rng.normal(0, 30, 9000)
    v = _rolling_mean(returns, 60)
    assert _codes(Example(series={"reward/score": v}, framework="sb3")).get("PD204") == "error"


def test_a_collapse_is_dated_where_it_holds_not_at_the_peak():
    # issue 37: the headline step is where the finding's condition holds (the reward below the
    # halfway mark for good), and the cost counts from there; the peak it fell from is context
    rng = np.random.default_rng(11)
    v = np.r_[np.linspace(0.0, 1.0, 60), np.full(60, 1.0), np.full(80, 0.1)] + rng.normal(0, 0.05, 200)
    findings, _ = run_rules(example_run(Example(series={"reward/score": v})))
    (f,) = [f for f in findings if f.code == "PD204"]
    assert f.peak_step < 120 <= f.start_step == f.threshold_step < 130
    assert f"at step {f.threshold_step}" in f.message


@pytest.mark.parametrize("seed", range(4))
def test_the_first_point_of_a_rolling_mean_is_no_spike(seed):
    # the first point averages the two episodes finished so far, the next ones more
    rng = np.random.default_rng(seed)
    returns = np.r_[[9.0, 8.0], rng.normal(2.0, 0.5, 3000)] + np.linspace(0, 8, 3002)
    v = np.r_[returns[:2].mean(), _rolling_mean(returns, 60)]
    assert "PD201" not in _codes(Example(series={"reward/score": v}, framework="sb3"))
    v[len(v) // 2] += 40.0  # a jump in the middle still is one
    assert "PD201" in _codes(Example(series={"reward/score": v}, framework="sb3"))


# -- a reward that only fell ----------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_a_reward_that_only_fell_to_its_floor_did_not_improve(seed):
    # a chess agent that settles on a losing move: -96 early, then the -100 floor for good
    rng = np.random.default_rng(seed)
    v = np.r_[-100 + np.abs(rng.normal(0, 4, 12)).round(), np.full(170, -100.0)]
    codes = _codes(Example(series={"reward/score": v}, framework="sb3"))
    assert codes.get("PD301") == "warning"


@pytest.mark.parametrize("seed", range(4))
def test_a_reward_that_sags_a_little_at_its_ceiling_is_no_stagnation(seed):
    # a resumed GSM8K run at 0.95 accuracy that loses 0.02 (six standard errors of a window
    # mean) while its batches keep scattering around it: a sag, not a policy settled at its worst
    rng = np.random.default_rng(seed)
    v = np.clip(rng.normal(0.95, 0.013, 335) - np.linspace(0, 0.02, 335), 0, 1)
    t = summarize(np.arange(len(v)), v)
    assert t.change < -2 * t.noise * np.sqrt(2 / t.window)  # it clearly fell
    assert "PD301" not in _codes(Example(series={"reward/score": v}))


# -- a run that died of NaN is over where it stands -----------------------------------------
def _dying(n: int = 50) -> Example:
    entropy = np.r_[np.linspace(1.3, 1e-6, 12), np.full(n - 12, 1e-8)]
    grad = np.r_[np.random.default_rng(2).normal(5, 1, n - 1), np.nan]
    return Example(series={"policy/entropy": entropy, "grad/norm": grad, "reward/score": np.random.default_rng(3).normal(0, 0.1, n)})


def test_a_run_that_died_of_nan_is_judged_where_it_stands():
    run = example_run(_dying())
    run = dataclasses.replace(run, planned_steps=1001, planned_from="test")
    st = run.standing
    assert st.diverged == 49 and st.partial and st.fair()
    codes = _codes(_dying(), planned=1001)
    assert codes.get("PD701") in ("warning", "error")


def test_a_live_run_with_a_nan_at_its_last_step_is_not_declared_over():
    run = dataclasses.replace(example_run(_dying()), planned_steps=1001, planned_from="test", live=True)
    assert run.standing.diverged is None and not run.standing.fair()


def test_nan_in_a_metric_of_the_data_does_not_end_a_run():
    ex = _dying()
    ex.series["grad/norm"] = np.abs(ex.series["grad/norm"][:-1]).tolist() + [5.0]
    ex.series["value/explained_var"] = np.r_[np.zeros(10), np.full(40, np.nan)]
    run = dataclasses.replace(example_run(ex), planned_steps=1001, planned_from="test")
    # the explained variance's NaN says nothing of the weights: the training did not diverge
    assert run.standing.diverged is None


def test_peak_drop_of_a_sticky_series_uses_its_means():
    v = np.r_[np.zeros(40), (np.arange(40) % 2).astype(float), np.zeros(40)]  # 0, then half 1s, then 0
    pd = peak_drop(np.arange(len(v)), v)
    assert pd is not None and 0.3 < pd.peak <= 0.6 and pd.first == 0.0


# -- the swings of a rolling mean -------------------------------------------------------------
def _sb3_run(steps: np.ndarray, tags: dict[str, np.ndarray]):
    from ppo_doctor.canonical.metrics import build_run
    from ppo_doctor.frame import RawRun, RawSeries

    raw = RawRun(series=[RawSeries(tag=t, steps=steps, values=np.asarray(v, float), source="t") for t, v in tags.items()])
    return build_run("r", "/tmp/r", "test", ["/tmp/r/progress.csv"], raw)


def _pd501(run) -> bool:
    """PD501 found the swings, at any severity: around a flat level its finding is a note (a
    sign whose outcome, no progress, is PD301's), so the detector is what is tested here."""
    findings, _ = run_rules(run)
    return any(f.code == "PD501" for f in findings)


def test_a_rolling_mean_of_independent_episodes_does_not_oscillate():
    # SB3's ep_rew_mean over 100 episodes, logged every 5 episodes of 200 steps: neighbouring
    # points share 95 episodes, so judged point by point the mean's slow wander looks structured
    eplen, per = 200, 5
    apart_hits = real_hits = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        v = _rolling_mean(rng.exponential(30.0, 10_000), per)
        steps = (np.arange(1, len(v) + 1) * per * eplen).astype(np.int64)
        lengths = np.full(len(v), float(eplen))
        assert oscillation(steps, v).structure > 3  # the mechanism: point by point, "structure"
        apart_hits += _pd501(_sb3_run(steps, {"rollout/ep_rew_mean": v, "rollout/ep_len_mean": lengths}))
        # a real oscillation of the returns (period 2,000 episodes) is still one, one window apart
        wave = rng.normal(0, 10, 10_000) + 15 * np.sin(2 * np.pi * np.arange(10_000) / 2000) + 20
        real_hits += _pd501(_sb3_run(steps, {"rollout/ep_rew_mean": _rolling_mean(wave, per), "rollout/ep_len_mean": lengths}))
    assert apart_hits == 0 and real_hits == 10


def test_points_one_window_apart_follow_the_episode_length():
    from ppo_doctor.view import RunView
    from ppo_doctor.view.returns import one_per_window

    steps = np.arange(1, 1001, dtype=np.int64) * 1000
    lengths = np.r_[np.full(500, 10.0), np.full(500, 100.0)]  # 100 episodes: 1,000 steps, then 10,000
    run = _sb3_run(steps, {"rollout/ep_rew_mean": np.zeros(1000), "rollout/ep_len_mean": lengths})
    apart = one_per_window(RunView(run), steps, np.zeros(1000))
    assert apart is not None
    gaps = np.diff(apart[0])
    assert set(gaps[:400].tolist()) == {1000} and set(gaps[-40:].tolist()) == {10_000}
    assert one_per_window(RunView(_sb3_run(steps, {"rollout/ep_rew_mean": np.zeros(1000)})), steps, np.zeros(1000)) is None


# -- a reward held over several rows (sample-and-hold) ---------------------------------------
def _held(seed: int, collapse: bool, hold: int = 10, rows: int = 1000) -> np.ndarray:
    """A GRPO loop that writes a row every step but recomputes the reward every ``hold``-th:
    each evaluation (a rise from 1.6 to 1.9, noise sd 0.06) repeated ``hold`` times; with
    ``collapse`` the reward falls to 0.5 over the last 30 % of the rows."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows // hold)
    level = 1.6 + 0.3 * (1 - np.exp(-t / 15))
    if collapse:
        late = t >= 0.7 * len(t)
        level[late] = 0.5
    return np.repeat(level + rng.normal(0, 0.06, len(t)), hold)


def test_a_held_series_is_read_at_its_changes():
    v = _held(0, collapse=False)
    s = np.arange(len(v), dtype=np.int64)
    s2, v2 = at_changes(s, v)
    assert len(v2) == 100 and np.array_equal(s2, s[::10])
    # a sparse reward's repeats are its level, and a constant is not held
    sparse = _sparse(1)
    assert at_changes(np.arange(len(sparse)), sparse)[1] is sparse
    flat = np.zeros(50)
    assert at_changes(np.arange(50), flat)[1] is flat


def test_a_return_that_sits_at_levels_is_not_held():
    # an InvertedPendulum-like return: it moves point to point, sits at its cap 1000 for a
    # while and at 3 (the pole falls at once) for its last 35 points.  Half its points repeat,
    # but most runs of equal values are one point long: the repeats measure those levels, and
    # reading the series at its changes would make its collapse a single point (real23)
    rng = np.random.default_rng(5)
    v = np.r_[rng.uniform(10, 200, 30), np.full(30, 1000.0), rng.uniform(20, 400, 5), np.full(35, 3.0)]
    s = np.arange(len(v), dtype=np.int64)
    assert at_changes(s, v)[1] is v
    assert _codes(Example(series={"reward/score": v}, framework="sb3")).get("PD204") == "error"


def _live_stops(v: np.ndarray) -> list[str]:
    run = example_run(Example(series={"reward/score": v}))
    _, alerts = replay(run, check_every=5)
    return [a.code for _, a in alerts if a.severity == "error"]


def test_a_healthy_reward_held_over_ten_rows_is_not_stopped_live():
    # Before the held series was read at its changes, 12 of these 20 runs were stopped by PD204:
    # nine zero differences in ten made the noise read near zero and a dip of one noise sd
    # decisive (real18's Fair-RLVR runs, stopped at steps 125 and 130).
    stopped = [seed for seed in range(20) if _live_stops(_held(seed, collapse=False))]
    assert stopped == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_held_reward_that_collapses_is_still_stopped_live(seed):
    assert "PD204" in _live_stops(_held(seed, collapse=True))


# -- a reward that only got worse than the policy it started from ----------------------------
def _fell_early(seed: int, regain: bool, n: int = 400) -> np.ndarray:
    """A return at -50 for its first 1.5 % of points (the initial policy), down to -300 by 6 %,
    then climbing back: to -220 (worse than the start for good), or, with ``regain``, to +100."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=np.float64)
    fall = np.interp(t, [0, 6, 24, n - 1], [-50, -50, -300, -300])
    back = np.interp(t, [0, 0.4 * n, n - 1], [0, 0, 400 if regain else 80])
    return fall + back + rng.normal(0, 8, n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_reward_worse_than_its_start_for_good_is_not_an_improvement(seed):
    # real20's SB3 CarRacing run (-52 -> -330 within 30k steps, back to -217 at best) had "risen"
    # from its first 10 % window, which already held the fall
    codes = _codes(Example(series={"reward/score": _fell_early(seed, regain=False)}, framework="sb3"))
    assert codes.get("PD301") == "warning"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_reward_that_dips_early_and_climbs_past_its_start_is_learning(seed):
    codes = _codes(Example(series={"reward/score": _fell_early(seed, regain=True)}, framework="sb3"))
    assert "PD301" not in codes and "PD204" not in codes


def _last_window(last: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """100 points of small noise around 0 whose last 10 are ``last``: the first window's median
    and mean are both 0."""
    v = np.random.default_rng(7).normal(0.0, 0.1, 100)
    v[:10] = 0.0
    v[-10:] = last
    return np.arange(100, dtype=np.int64), v


def test_a_rise_of_the_window_median_alone_is_no_rise():
    # six late points at +1 and four at -2: the last window's median is +1 and its mean -0.2, a
    # reward of few values whose median jumped while the points did not move up (the GRPO
    # matrix's shuffled-reward-s2, real25's drone DDQN)
    s, v = _last_window([1.0] * 6 + [-2.0] * 4)
    r = rise(s, v, 2.0)
    assert r.t.change >= r.limit
    assert not r.improved


def test_a_rise_that_the_window_means_show_too_is_a_rise():
    s, v = _last_window([1.0] * 10)
    assert rise(s, v, 2.0).improved


def _flat_score_whose_last_median_falls() -> np.ndarray:
    """A game score about 50 the whole run, whose last tenth is 12 episodes at 43 and 8 at 62:
    that window's median is 43 and its mean 50.6 (the Chrome Dino DQN of blind set real26)."""
    v = np.random.default_rng(31).normal(50.0, 3.0, 200)
    v[-20:] = [43.0] * 12 + [62.0] * 8
    np.random.default_rng(32).shuffle(v[-20:])
    return v


def test_a_fall_of_the_window_median_alone_is_no_fall_but_a_flat_reward():
    codes = _codes(Example(series={"reward/score": _flat_score_whose_last_median_falls()}, framework="sb3"))
    assert codes.get("PD301") == "warning"
    assert "PD204" not in codes


def test_the_finding_says_the_window_means_did_not_fall():
    (f,) = [f for f in run_rules(example_run(Example(series={"reward/score": _flat_score_whose_last_median_falls()}, framework="sb3")))[0] if f.code == "PD301"]
    assert "; the window medians fell but their means went 50" in f.message


# -- a return frozen at one level ----------------------------------------------------------
def _frozen_return(first_dip: float) -> np.ndarray:
    """24 updates of a one-step-episode return held at -13.34 with float jitter of 0.002 (a
    policy whose actions saturate at the bounds of their box), whose first point sits
    ``first_dip`` lower: blind set real32's billiards run, whose action std ran away meanwhile."""
    v = np.random.default_rng(41).normal(-13.344, 0.002, 24)
    v[0] -= first_dip
    return v


def test_a_return_frozen_within_a_hundredth_of_its_level_is_stagnation():
    # the first point's dip is 8 noise units, so it read as a rise inside the first window (a
    # task solved early); it is 0.1 % of the return's level, which no one calls learning
    codes = _codes(Example(series={"reward/score": _frozen_return(0.015)}, framework="sb3"))
    assert codes.get("PD301") == "warning"


def test_a_rise_inside_the_first_window_is_still_a_task_solved_early():
    # the same jitter on a return that jumped from -16 in its first update: solved, not stuck
    codes = _codes(Example(series={"reward/score": _frozen_return(2.7)}, framework="sb3"))
    assert "PD301" not in codes


def test_a_return_that_moves_under_a_hundredth_of_its_level_never_collapses():
    # -477 +- 3 for 500 updates, with a stretch 4 higher in the middle: blind set real34's
    # energy-allocation PPO, whose "climb" of 0.8 % and return to -477 read as a collapse
    v = np.random.default_rng(43).normal(-477.0, 1.5, 500)
    v[200:260] += 4.0
    codes = _codes(Example(series={"reward/score": v}, framework="sb3"))
    assert "PD204" not in codes and codes.get("PD301") == "warning"


def _smooth_return(gain: float) -> np.ndarray:
    """100 points of a smooth running-mean return at -9.78 that climbs ``gain`` over its first
    quarter and then holds, with float jitter of 1e-4 (blind set real39's Pendulum PPO: -9.78 ->
    -9.69, then -9.69 on every point)."""
    v = np.full(100, -9.78 + gain)
    v[:25] = np.linspace(-9.78, -9.78 + gain, 25)
    return v + np.random.default_rng(44).normal(0.0, 1e-4, 100)


def test_a_running_mean_that_climbs_under_a_hundredth_of_its_level_did_not_improve():
    # 0.09 is hundreds of standard errors of this smooth series and under 1 % of its level
    s = np.arange(100, dtype=np.int64)
    assert not rise(s, _smooth_return(0.09), 2.0).improved
    codes = _codes(Example(series={"reward/score": _smooth_return(0.09)}, framework="sb3"))
    assert codes.get("PD301") == "warning"


def test_a_running_mean_that_climbs_a_tenth_of_its_level_improved():
    s = np.arange(100, dtype=np.int64)
    assert rise(s, _smooth_return(0.98), 2.0).improved
    assert "PD301" not in _codes(Example(series={"reward/score": _smooth_return(0.98)}, framework="sb3"))


@pytest.mark.parametrize("rating_rises", [True, False])
def test_a_self_play_reward_that_falls_while_the_rating_rises_is_a_note(rating_rises):
    # a self-play league: the reward (a score against the league) falls as the league fills
    # with stronger checkpoints; the learner's rating keeps rising, so the policy did not get
    # worse (ML-Agents' ELO-Rating-System.md; blind set real24's league run). A rating that
    # falls with the reward confirms the collapse.
    rng = np.random.default_rng(5)
    reward = np.r_[np.full(100, 0.7), np.full(300, 0.02)] + rng.normal(0, 0.05, 400)
    rating = np.linspace(1500, 3300 if rating_rises else 900, 400) + rng.normal(0, 20, 400)
    codes = _codes(Example(series={"reward/score": reward, "learner_rating": rating}))
    assert codes.get("PD204") == ("info" if rating_rises else "error")

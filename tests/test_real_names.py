"""What people really log (issue 14): today's TRL names, critic-free runs, Stable-Baselines 2 and
home-made names, CSV step axes, and files that are not runs.

Real writers throughout: TRL's own source for its metric names, tensorboardX for SB2-style event
files, SB3's CSV logger inside a real (tiny) PPO run, a real W&B offline run with its debug logs.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ppo_doctor import analyze
from ppo_doctor.frame import RawRun, RawSeries
from ppo_doctor.ingest.sweep_table import sweep_table_reason
from ppo_doctor.canonical.metrics import build_run, map_tags
from ppo_doctor.canonical.name_tokens import infer_canonical
from ppo_doctor.pipeline import load
from ppo_doctor.report import RenderOptions, render
from ppo_doctor.report.metrics_listing import render_metrics


@pytest.fixture(scope="module")
def writer():
    return pytest.importorskip("tensorboardX").SummaryWriter


def _raw(series: dict[str, list[float]], config: dict | None = None, steps: list[int] | None = None) -> RawRun:
    out = RawRun(config=dict(config or {}))
    for tag, vals in series.items():
        st = steps if steps is not None else list(range(len(vals)))
        out.series.append(RawSeries(tag=tag, steps=np.array(st[: len(vals)]), values=np.array(vals, dtype=float)))
    return out


def _run(series: dict[str, list[float]], config: dict | None = None, steps: list[int] | None = None):
    return build_run("r", "r", "jsonl", [], _raw(series, config, steps))


# -- today's TRL: every metric its online trainers log is mapped ---------------------------------
def _trl_source_keys(module: str) -> set[str]:
    """The literal metric names a TRL trainer puts in ``self._metrics[...]`` / ``self.stats[...]``."""
    spec = importlib.util.find_spec("trl")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("trl is not installed")
    src = (Path(next(iter(spec.submodule_search_locations))) / module).read_text(encoding="utf-8")
    keys = set(re.findall(r'_metrics\[(?:mode|"train")\]\[f?"([^"]+)"\]', src)) | set(re.findall(r'self\.stats\["([^"]+)"\]', src))
    assert keys, f"no metric names found in trl/{module}: the logging code moved"
    return {k.replace("{reward_func_name}", "accuracy_reward") for k in keys}


@pytest.mark.parametrize(
    "module, framework",
    [
        ("trainer/grpo_trainer.py", "trl_grpo"),
        ("trainer/rloo_trainer.py", "trl_rloo"),
        ("experimental/online_dpo/online_dpo_trainer.py", "trl_online_dpo"),
    ],
)
@pytest.mark.parametrize("prefix", ["", "train/"])
def test_every_trl_online_trainer_metric_is_mapped(module, framework, prefix):
    keys = _trl_source_keys(module)
    # vespo/phi_seq_mean (loss_type="vespo" only) has no canonical meaning yet; everything else must map
    keys -= {"vespo/phi_seq_mean"}
    hf = {"loss", "grad_norm", "learning_rate", "epoch"}
    tags = [prefix + k for k in sorted(keys | hf)]
    # each name alone (some exclude each other: cispo_clip_ratio is clip_ratio/* under loss_type="cispo")
    unmapped = [t for t in tags if t not in map_tags([t], framework).mapping]
    assert not unmapped, f"TRL {module} logs names with no mapping: {unmapped}"
    result = map_tags(tags, framework)
    assert len(result.mapping) >= len(tags) - 1  # all at once: only the cispo synonym may lose
    assert len(set(result.mapping.values())) == len(result.mapping)


# Names from the sources (veRL b178a3c, 2026-01: trainer/ppo/metric_utils.py, workers/actor/dp_actor.py,
# core_algos.py, the DAPO recipe; OpenRLHF 3c3be62, 2026-08: ppo_utils/experience_maker.py,
# ray/ppo_actor.py, ray/ppo_critic.py) and what they mean.
VERL_GRPO = {
    "critic/score/mean": "reward/score",
    "critic/rewards/mean": "reward/total",
    "actor/kl_loss": "kl/ref",
    "actor/kl_coef": "kl/coef",
    "actor/ppo_kl": "kl/old",
    "actor/entropy": "policy/entropy",
    "actor/pg_clipfrac": "policy/clipfrac",
    "actor/pg_clipfrac_lower": "policy/clipfrac_low",
    "actor/pg_loss": "loss/policy",
    "actor/grad_norm": "grad/norm",
    "actor/lr": "opt/lr",
    "critic/advantages/mean": "adv/mean",
    "critic/returns/mean": "return/mean",
    "response_length/mean": "len/response_mean",
    "response_length/min": "len/response_min",
    "response_length/max": "len/response_max",
    "response_length/clip_ratio": "len/response_clip_ratio",
    "train/num_gen_batches": "progress/gen_batches",
    "rollout_corr/kl": "mismatch/kl",
    "training/global_step": "progress/step",
}
OPENRLHF_REINFORCE = {
    "reward": "reward/score",
    "return": "reward/total",
    "group_reward_std": "reward/std",
    "kl": "kl/ref",
    "logprobs_diff": "mismatch/logp_diff_mean",
    "policy_loss": "loss/policy",
    "entropy_loss": "policy/entropy",
    "actor_lr": "opt/lr",
    "actor_grad_norm": "grad/norm",
    "response_length": "len/response_mean",
    "truncated": "len/response_clip_ratio",
}


@pytest.mark.parametrize("framework, names", [("verl", VERL_GRPO), ("openrlhf", OPENRLHF_REINFORCE)])
def test_verl_and_openrlhf_critic_free_names(framework, names):
    tags = [("train/" + t if framework == "openrlhf" else t) for t in names]  # OpenRLHF's W&B logger prefixes train/
    result = map_tags(tags, framework)
    assert {k.removeprefix("train/") if framework == "openrlhf" else k: v for k, v in result.mapping.items()} == names
    # a mismatch KL (rollout engine vs trainer) is never read as the KL to the reference
    assert result.info["kl/ref"].raw_tag in ("actor/kl_loss", "train/kl")


def test_verl_names_flattened_into_csv_columns_are_read_as_verl():
    # a home-made CSV export of veRL's metrics writes each name with its '/' as '_'
    flat = {k.replace("/", "_"): v for k, v in VERL_GRPO.items() if "/" in k}
    series = {k: [0.1, 0.2, 0.3] for k in flat}
    series["actor_prefix_clip_ratio"] = [0.2, 0.2, 0.2]  # the author's setting, not a clip fraction
    run = _run(series)
    assert run.framework == "verl"
    assert {t: c for t, c in run.mapping.items() if t in flat} == flat
    assert run.mapping.get("actor_prefix_clip_ratio") is None


def test_async_grpo_kl_is_to_the_rollout_policy():
    # AsyncGRPOTrainer's kl is (ratio - 1) - log(ratio), ratio = pi/pi_old (async_grpo_trainer.py)
    run = _run({"reward": [0.1, 0.2], "kl": [0.001, 0.002], "ratio": [1.0, 1.01], "perf/weight_sync_s": [0.5, 0.5], "sample/staleness_mean": [1.0, 1.5]})
    assert run.framework == "trl_async_grpo"
    assert run.mapping["kl"] == "kl/old" and run.metric_info["kl/old"].estimator == "k3"
    assert run.critic_free and not run.frame.has("kl/ref")


def test_grpo_reward_functions_are_kept_apart_and_the_kl_is_k3():
    run = _run(
        {
            "reward": [1.0, 1.5, 2.0],
            "reward_std": [0.5, 0.4, 0.3],
            "frac_reward_zero_std": [0.0, 0.1, 0.2],
            "rewards/accuracy/mean": [0.5, 0.7, 0.9],
            "rewards/accuracy/std": [0.1, 0.1, 0.1],
            "rewards/format/mean": [0.5, 0.8, 1.1],
            "rewards/format/std": [0.2, 0.2, 0.2],
            "kl": [0.0, 0.01, 0.02],
            "completions/mean_length": [40, 41, 42],
            "clip_ratio/region_mean": [0.0, 0.01, 0.0],
        }
    )
    assert run.framework == "trl_grpo"
    assert run.mapping["rewards/accuracy/mean"] == "reward/fn/accuracy/mean"
    assert run.mapping["rewards/format/std"] == "reward/fn/format/std"
    assert run.frame.series("reward/fn/format/mean").tolist() == [0.5, 0.8, 1.1]
    assert run.metric_info["kl/ref"].estimator == "k3" and run.metric_info["kl/ref"].reduction == "token_mean"
    assert not run.unmapped


def test_final_row_totals_are_config_not_series(writer, tmp_path):
    # HF's TensorBoardCallback writes the last on_log row (train_runtime ...) once, with the train/ prefix
    w = writer(str(tmp_path))
    for step in range(1, 6):
        w.add_scalar("train/loss", 1.0 / step, step)
        w.add_scalar("train/reward", 0.1 * step, step)
    for k, v in {"train_runtime": 12.5, "train_samples_per_second": 3.0, "train_loss": 0.4, "total_flos": 1e12}.items():
        w.add_scalar(f"train/{k}", v, 5)
    w.close()
    (run,) = load(tmp_path).runs
    assert not any("runtime" in m or "flos" in m or m.endswith("train_loss") for m in run.frame.metrics)
    assert run.raw_config["train_runtime"] == 12.5 and run.raw_config["train_loss"] == pytest.approx(0.4)
    assert run.frame.has("loss/total")


# -- critic-free runs and KL off by configuration -----------------------------------------------
def _grpo_beta0_series() -> dict[str, list[float]]:
    n = 30
    return {
        "reward": list(np.linspace(0.2, 0.8, n)),
        "reward_std": [0.3] * n,
        "frac_reward_zero_std": [0.1] * n,
        "entropy": list(np.linspace(0.9, 0.8, n)),
        "completions/mean_length": [100.0] * n,
        "loss": [0.01] * n,
        "grad_norm": [0.5] * n,
        "learning_rate": [1e-6] * n,
    }


def _grpo_beta0_trainer_state(tmp_path):
    """A 30-step GRPO beta-0 run as TRL's trainer_state.json; the folder holding it."""
    log = tmp_path / "grpo" / "trainer_state.json"
    log.parent.mkdir()
    hist = [{"step": i + 1, **{k: v[i] for k, v in _grpo_beta0_series().items()}} for i in range(30)]
    log.write_text(json.dumps({"global_step": 30, "log_history": hist}))
    return log.parent


def test_critic_free_grpo_says_so_once(tmp_path):
    report = analyze(_grpo_beta0_trainer_state(tmp_path))
    (rr,) = report.runs
    assert rr.run.critic_free and rr.run.kl_off
    value_rules = [n for n in rr.not_applicable if any(m.startswith(("loss/value", "value/")) for m in n.missing)]
    assert value_rules and all(n.by_design.startswith("critic-free") for n in value_rules)
    kl_rules = [n for n in rr.not_applicable if "kl/ref" in n.missing]
    assert kl_rules and all(n.by_design.startswith("KL off by configuration") for n in kl_rules)
    text = render(report, "text", RenderOptions())
    # the by-design sentence once; the verdict line's reason says "critic-free" too (issue 15 §5)
    assert text.count("the value-function rules do not apply") == 1
    assert "critic-free" in next(l for l in text.splitlines() if "HEALTHY" in l)
    line = next(l for l in text.splitlines() if "missing metrics" in l) if "missing metrics" in text else ""
    assert "PD401" not in line and "PD101" not in line  # neither listed as a missing metric
    assert "no KL metric logged" not in rr.verdict_reason and "KL off by configuration" in rr.verdict_reason
    doc = json.loads(render(report, "json", RenderOptions()))
    assert set(doc["runs"][0]["by_design"]) == {"critic", "kl"}
    for fmt in ("markdown", "html"):
        out = render(report, fmt, RenderOptions())
        assert out.count("the value-function rules do not apply") == 1 and out.count("the KL rules do not apply") == 1, fmt
        assert "PD401" not in out and "PD101" not in out, fmt  # neither rule listed as missing a metric


def test_by_design_needs_evidence():
    # GRPO logging kl: KL is on; a PPO run with a critic is not critic-free
    run = _run({**_grpo_beta0_series(), "kl": [0.01] * 30})
    assert run.critic_free and not run.kl_off
    ppo = _run({"objective/scores": [1.0, 2.0], "objective/kl": [0.1, 0.2], "loss/value_avg": [0.5, 0.4], "policy/approxkl_avg": [0.01, 0.02]})
    assert ppo.framework == "trl" and ppo.by_design == {}
    # veRL GRPO: the config's estimator says critic-free; beta > 0 in the config is not "off"
    verl = _run(
        {"critic/score/mean": [0.1, 0.2], "actor/pg_loss": [0.1, 0.1], "actor/kl_loss": [0.01, 0.02], "response_length/mean": [100, 90]},
        config={"algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": {"actor": {"use_kl_loss": True, "kl_loss_coef": 0.001}}},
    )
    assert verl.framework == "verl" and verl.critic_free and not verl.kl_off
    # OpenRLHF REINFORCE++ with its KL coefficient at 0
    orl = _run({"reward": [0.1, 0.2], "policy_loss": [0.1, 0.1], "actor_lr": [1e-6, 1e-6], "response_length": [10, 11]}, config={"advantage_estimator": "reinforce", "init_kl_coef": 0.0})
    assert orl.framework == "openrlhf" and orl.critic_free and orl.kl_off


# -- Stable-Baselines 2 (TensorFlow) -----------------------------------------------------------
def _write_sb2(writer, folder: Path, rollouts: int = 4, n_envs: int = 4, n_steps: int = 32, nminibatches: int = 4, noptepochs: int = 2) -> None:
    """Event file with SB2 PPO2's tags and step scheme (stable_baselines/ppo2/ppo2.py): one point per
    minibatch at ``(num_timesteps // update_fac + k) * update_fac`` and one episode reward per
    environment at ``num_timesteps + done index`` (total_episode_reward_logger)."""
    w = writer(str(folder))
    rng = np.random.default_rng(0)
    n_batch = n_envs * n_steps
    update_fac = n_batch // nminibatches // noptepochs + 1  # SB2 2.x had the +1: minibatch steps overrun the rollout
    for r in range(rollouts):
        num_timesteps = r * n_batch
        for env in range(n_envs):  # episode ends inside the rollout, env by env: steps go back
            for done in sorted(rng.choice(n_steps, 2, replace=False)):
                w.add_scalar("episode_reward", float(rng.normal(10 + r, 1)), num_timesteps + int(done))
        num_timesteps += n_batch
        for k in range(nminibatches * noptepochs):
            step = (num_timesteps // update_fac + k) * update_fac
            w.add_scalar("loss/entropy_loss", 1.2 - 0.05 * r, step)
            w.add_scalar("loss/policy_gradient_loss", float(rng.normal(0, 0.01)), step)
            w.add_scalar("loss/value_function_loss", 5.0 / (r + 1), step)
            w.add_scalar("loss/approximate_kullback-leibler", 0.002, step)
            w.add_scalar("loss/clipfrac", 0.05, step)
            w.add_scalar("loss/loss", 2.0 / (r + 1), step)
            w.add_scalar("input_info/discounted_rewards", 8.0 + r, step)
            w.add_scalar("input_info/learning_rate", 2.5e-4, step)
            w.add_scalar("input_info/advantage", 0.0, step)
            w.add_scalar("input_info/clip_range", 0.2, step)
    w.close()


def test_ml_agents_statistics_are_read_by_their_documented_names():
    # Unity ML-Agents' TensorBoard statistics (page Using-Tensorboard.md); the blind set real11 lost
    # the reward of its six ML-Agents runs to a name nobody had listed
    n = 40
    run = _run(
        {
            "Environment/Cumulative Reward": list(np.linspace(-1.0, 1.0, n)),
            "Environment/Episode Length": [100.0] * n,
            "Policy/Entropy": list(np.linspace(2.0, 0.5, n)),
            "Policy/Extrinsic Value Estimate": list(np.linspace(-0.5, 0.9, n)),
            "Losses/Policy Loss": [0.02] * n,
            "Losses/Value Loss": list(np.linspace(0.2, 0.02, n)),
            "Policy/Learning Rate": [3e-4] * n,
        }
    )
    assert run.mapping["Environment/Cumulative Reward"] == "reward/score"
    assert run.mapping["Policy/Extrinsic Value Estimate"] == "value/mean"
    assert run.mapping["Losses/Value Loss"] == "loss/value"
    assert run.frame.has("reward/score")


def test_sb2_tags_are_mapped_and_its_step_scheme_is_not_a_restart(writer, tmp_path):
    _write_sb2(writer, tmp_path)
    report = analyze(tmp_path)
    (rr,) = report.runs
    run = rr.run
    assert run.framework == "sb2"
    assert run.mapping["loss/approximate_kullback-leibler"] == "kl/old" and run.metric_info["kl/old"].estimator == "k2"
    assert run.mapping["loss/entropy_loss"] == "policy/entropy"
    assert run.mapping["loss/value_function_loss"] == "loss/value"
    assert run.mapping["loss/policy_gradient_loss"] == "loss/policy"
    assert run.mapping["loss/clipfrac"] == "policy/clipfrac"
    assert run.mapping["episode_reward"] == "reward/score"
    assert run.mapping["input_info/learning_rate"] == "opt/lr"
    assert run.restarts == []
    assert not any("was restarted" in w for w in run.warnings)
    assert any("Stable-Baselines 2" in w for w in run.warnings)
    assert "PD904" not in {f.code for f in rr.findings}


# -- home-made names ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "tag, canonical",
    [
        ("Loss/entropy", "loss/entropy"),
        ("entropy_loss", "loss/entropy"),
        ("policy_gradient_loss", "loss/policy"),
        ("Loss/pi", "loss/policy"),
        ("total_loss", "loss/total"),
        ("value_loss", "loss/value"),
        ("Loss/v", "loss/value"),
        ("policyEntropy", "policy/entropy"),
        ("approx_kl_div", "kl/old"),
        ("clip_fraction_mean", "policy/clipfrac"),
        ("mean_episode_return", "reward/score"),
        ("discriminator loss total", None),
        ("value_loss_std", None),
        ("max_episode_rewards", None),
        ("fps", None),
        # a column that is the reward and nothing else (home-made CSVs of the blind set real10)
        ("Reward", "reward/score"),
        ("Return", "reward/score"),
        ("train_reward", "reward/score"),
        ("val_reward", None),
        ("test_reward", None),
        ("discounted_return", None),
        ("val_value_loss", None),
        # an episode's total reward, the sum of its step rewards (three home-made loops of real15)
        ("total_reward", "reward/score"),
        ("Total Reward", "reward/score"),
        ("val_total_reward", None),
        ("total_reward_std", None),
        # a gradient norm spelt out (a CS336 GRPO loop of the blind set real38)
        ("gradient_norm", "grad/norm"),
        ("grad_norm", "grad/norm"),
        ("critic_gradient_norm", "grad/norm_critic"),
        # the reward abbreviated (a home-made DQN's episode.rwd, blind set real51), and a reward
        # under a TensorBoard section word (a scalar export's scalars_train_return)
        ("episode.rwd", "reward/score"),
        ("ep_rew", "reward/score"),
        ("scalars_train_return", "reward/score"),
        ("charts/return", "reward/score"),
        ("scalars_eval_return", None),
        ("rew_std", None),
        ("Episode/rew_action_rate", None),
        ("Episode/rew_tracking_lin_vel", None),
        # the reward a game ends with (a Wordle GRPO loop's per-game final_reward, blind set real47)
        ("final_reward", "reward/score"),
        ("final_reward_std", None),
        ("eval_final_reward", None),
    ],
)
def test_names_are_inferred_from_their_words(tag, canonical):
    guess = infer_canonical(tag)
    assert (guess.canonical if guess else None) == canonical


def test_inferred_names_in_a_csv_are_marked_with_their_sign(tmp_path):
    f = tmp_path / "train_log.csv"
    rows = [{"update": i, "Loss/entropy": -1.5 + 0.01 * i, "policy_gradient_loss": 0.01, "value_loss": 3.0 / (i + 1), "total_loss": 1.0, "ep_reward_mean": i} for i in range(20)]
    with f.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    result = load(f)
    (run,) = result.runs
    info = run.metric_info
    assert {"loss/entropy", "loss/policy", "loss/value", "loss/total", "reward/score"} <= set(run.mapping.values())
    # the names no alias table lists are the inferred ones
    assert {m for m, i in info.items() if i.inferred} >= {"loss/entropy", "loss/policy"}
    assert info["loss/entropy"].sign == -1 and "-entropy" in info["loss/entropy"].note
    text = render_metrics(result, "text")
    assert "Loss/entropy  (inferred from the name" in text
    doc = json.loads(render_metrics(result, "json"))
    assert "loss/entropy" in doc["runs"][0]["inferred"]


def test_unknown_framework_maps_sb3_style_names():
    run = _run({"rollout/ep_rew_mean": [1.0, 2.0, 3.0], "rollout/ep_len_mean": [10, 11, 12]})
    assert run.framework == "unknown"
    assert run.mapping["rollout/ep_rew_mean"] == "reward/score"
    run = _run({"rollout/ep_rew_mean": [1.0, 2.0], "train/value_loss": [1.0, 0.5], "train/entropy_loss": [-1.0, -0.9]})
    assert run.mapping["train/value_loss"] == "loss/value" and run.metric_info["loss/entropy"].sign == -1


# -- CSV step axis ------------------------------------------------------------------------------
@pytest.mark.slow
def test_sb3_csv_logger_steps_are_total_timesteps(tmp_path):
    """A real SB3 PPO run writing its progress.csv through stable_baselines3.common.logger."""
    sb3 = pytest.importorskip("stable_baselines3")
    pytest.importorskip("gymnasium")
    from stable_baselines3.common.logger import configure

    model = sb3.PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(total_timesteps=256)
    (run,) = load(tmp_path / "progress.csv").runs
    with (tmp_path / "progress.csv").open() as fh:
        written = [int(float(r["time/total_timesteps"])) for r in csv.DictReader(fh)]
    assert run.frame.step_range() == (min(written), max(written))
    assert run.frame.has("loss/value") and run.frame.has("kl/old")
    assert "time/total_timesteps" not in run.frame.metrics


def test_csv_cumulative_step_column_wins_over_counters(tmp_path):
    f = tmp_path / "progress.csv"
    f.write_text("episodes,nupdates,total timesteps,mean 100 episode reward\n" + "".join(f"{3 * i},{i},{2048 * (i + 1)},{i * 0.5}\n" for i in range(10)))
    (run,) = load(f).runs
    assert run.frame.step_range() == (2048, 20480)
    assert run.frame.has("episodes") and run.frame.has("nupdates")


# -- no false runs ------------------------------------------------------------------------------
@pytest.mark.slow
def test_wandb_offline_run_with_its_debug_logs_is_one_run(tmp_path):
    pytest.importorskip("wandb")
    # a training process of its own, as in real use (wandb patches the process it runs in)
    script = (
        "import wandb\n"
        f"run = wandb.init(project='p', mode='offline', dir={str(tmp_path)!r}, config={{'lr': 1e-5, 'beta': 0.05}})\n"
        "for i in range(20):\n"
        "    print('step', i)\n"  # captured into files/output.log
        "    run.log({'train/reward': 0.1 * i, 'train/kl': 0.01 * i, 'train/loss': 1.0 / (i + 1)}, step=i)\n"
        "run.finish()\n"
    )
    env = {**os.environ, "WANDB_SILENT": "true", "WANDB_MODE": "offline"}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120, capture_output=True)
    run_dir = next((tmp_path / "wandb").glob("offline-run-*"))
    assert (run_dir / "logs" / "debug-internal.log").is_file()
    result = load(tmp_path)
    assert [r.format for r in result.runs] == ["wandb_binary"], ([str(e) for e in result.errors], sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")))
    assert not result.errors, result.errors
    for side in (run_dir / "logs", run_dir / "files", run_dir / "logs" / "debug-internal.log", run_dir / "logs" / "debug.log"):
        assert load(side).runs == [], side
    # the same side files copied next to a training log are still no runs
    other = tmp_path / "copy"
    other.mkdir()
    for name in ("debug.log", "debug-internal.log"):
        (other / name).write_bytes((run_dir / "logs" / name).read_bytes())
    (other / "wandb-summary.json").write_text(json.dumps({"train/reward": 1.9, "_step": 19}))
    (other / "wandb-metadata.json").write_text(json.dumps({"os": "Linux", "python": "3.11"}))
    (other / "requirements.txt").write_text("torch==2.13.0\n")
    (other / "metrics.jsonl").write_text("".join(json.dumps({"step": i, "reward": float(i)}) + "\n" for i in range(5)))
    runs = load(other).runs
    assert [r.files for r in runs] == [[str(other / "metrics.jsonl")]]


def test_sweep_tables_are_skipped_with_a_note(tmp_path):
    grid = tmp_path / "sweep_results.csv"
    grid.write_text("beta,seed,steps,mean_reward,max_kl,status\n" + "".join(f"{b},{s},200,{b * s % 7},{1 / b},ok\n" for b in (0.05, 0.1, 0.2) for s in (1, 2, 3)))
    export = tmp_path / "wandb_export.csv"
    export.write_text('Name,State,learning_rate,reward\n"run-a",finished,1e-5,0.5\n"run-b",finished,3e-5,0.7\n"run-c",crashed,1e-4,0.1\n')
    (tmp_path / "log.jsonl").write_text("".join(json.dumps({"step": i, "reward": float(i)}) + "\n" for i in range(5)))
    assert "beta" in sweep_table_reason(grid) and "seed" in sweep_table_reason(grid)
    assert "Name" in sweep_table_reason(export)
    result = load(tmp_path)
    assert [Path(r.files[0]).name for r in result.runs] == ["log.jsonl"]
    notes = [e for e in result.errors if "sweep table" in e.message]
    assert len(notes) == 2 and all(e.level == "info" for e in notes)


def test_a_training_csv_is_not_a_sweep_table(tmp_path):
    # no step column and a learning rate taking a new value every row: a log, not a grid of runs
    f = tmp_path / "a" / "log.csv"
    f.parent.mkdir()
    f.write_text("learning_rate,reward,value_loss\n" + "".join(f"{3e-4 * (1 - i / 50):.6g},{i * 0.1},{1 / (i + 1)}\n" for i in range(50)))
    assert sweep_table_reason(f) is None
    g = tmp_path / "b" / "progress.csv"
    g.parent.mkdir()
    g.write_text("time/total_timesteps,train/learning_rate,rollout/ep_rew_mean\n" + "".join(f"{64 * (i + 1)},0.0003,{i}\n" for i in range(5)))
    assert sweep_table_reason(g) is None
    assert len(load(tmp_path).runs) == 2


# -- no merged runs -----------------------------------------------------------------------------
def test_event_files_restarting_from_zero_are_one_run_each(writer, tmp_path):
    for seed in range(3):  # three launches writing into the same log folder, each from step 0
        w = writer(str(tmp_path), filename_suffix=f".launch{seed}")
        for step in range(20):
            w.add_scalar("train/reward", seed + 0.1 * step, step)
        w.close()
    runs = load(tmp_path).runs
    assert len(runs) == 3
    assert all(r.frame.step_range() == (0, 19) and r.restarts == [] for r in runs)
    assert len({r.id for r in runs}) == 3


def test_a_resumed_event_file_stays_with_its_run(writer, tmp_path):
    w = writer(str(tmp_path), filename_suffix=".a")
    for step in range(20):
        w.add_scalar("train/reward", 0.1 * step, step)
    w.close()
    w = writer(str(tmp_path), filename_suffix=".b")  # resumed from the checkpoint at step 15
    for step in range(15, 40):
        w.add_scalar("train/reward", 0.1 * step, step)
    w.close()
    (run,) = load(tmp_path).runs
    assert run.frame.step_range() == (0, 39)
    assert len(run.files) == 2


def test_critic_free_healthy_reason_says_critic_free_in_every_format(tmp_path):
    # issue 15 §5: a healthy GRPO run logs ``loss`` (its policy loss) and has no critic by design;
    # its reason must say so, not "not judged: no policy/value loss metric logged"
    report = analyze(_grpo_beta0_trainer_state(tmp_path))
    (rr,) = report.runs
    assert rr.verdict == "healthy"
    reason = rr.verdict_reason
    assert "critic-free (TRL GRPOTrainer has no value function): no value metrics by design" in reason
    assert "policy/value loss" not in reason and "not judged" not in reason
    for fmt in ("text", "markdown", "html", "json", "sarif", "junit"):
        out = render(report, fmt, RenderOptions())
        assert "no value metrics by design" in out, fmt
        assert "no policy/value loss metric" not in out, fmt


def test_critic_free_without_any_loss_names_the_policy_loss_only(tmp_path):
    # a critic-free run that logs no loss at all lacks a policy loss, never a value loss
    series = {k: v for k, v in _grpo_beta0_series().items() if k != "loss"}
    log = tmp_path / "grpo" / "trainer_state.json"
    log.parent.mkdir()
    log.write_text(json.dumps({"global_step": 30, "log_history": [{"step": i + 1, **{k: v[i] for k, v in series.items()}} for i in range(30)]}))
    (rr,) = analyze(log.parent).runs
    assert rr.verdict == "healthy"
    assert "no value metrics by design" in rr.verdict_reason
    assert "not judged: no policy loss metric logged" in rr.verdict_reason


def test_skrl_reads_the_episode_return_not_the_per_step_reward():
    # skrl's agents track "Total reward" (the return of the last finished episodes, what skrl keeps
    # its best checkpoint by) beside "Instantaneous reward" (one step's mean reward, which
    # zig-zags within each episode); blind set real16 lost an IsaacGym collapse to the latter
    n = 40
    run = _run(
        {
            "Reward / Instantaneous reward (mean)": [0.1, -0.2] * (n // 2),
            "Reward / Total reward (mean)": list(np.linspace(-1500.0, -24000.0, n)),
            "Episode / Total timesteps (mean)": [500.0] * n,
            "Loss / Policy loss": [0.01] * n,
            "Loss / Value loss": list(np.linspace(1.0, 0.1, n)),
            "Loss / Entropy loss": [-0.02] * n,
            "Learning / Learning rate": [1e-3] * n,
        }
    )
    assert run.mapping["Reward / Total reward (mean)"] == "reward/score"
    assert "Reward / Instantaneous reward (mean)" not in run.mapping
    assert run.mapping["Loss / Entropy loss"] == "loss/entropy" and run.mapping["Learning / Learning rate"] == "opt/lr"


def test_rsl_rl_statistics_written_against_seconds_stay_off_the_step_axis():
    # rsl_rl writes Train/mean_reward against the iteration and again, as Train/mean_reward/time,
    # against the seconds trained: a 2,000-iteration run read as 3,279 steps (blind set real16)
    n = 60
    raw = _raw({"Train/mean_reward": list(np.linspace(0.0, 20.0, n)), "Train/mean_episode_length": [500.0] * n, "Loss/surrogate": [0.01] * n})
    raw.series.append(RawSeries(tag="Train/mean_reward/time", steps=np.arange(n) * 55, values=np.linspace(0.0, 20.0, n)))
    run = build_run("r", "r", "tensorboard", [], raw)
    assert run.frame.step_range() == (0, n - 1)
    assert "Train/mean_reward/time" not in run.frame.metrics and run.mapping["Train/mean_reward"] == "reward/score"
    assert any("Train/mean_reward/time" in i.message for i in run.issues)


def test_trl_014_reward_functions_are_read_by_their_old_names():
    # TRL 0.14-0.15's GRPOTrainer logged each reward function's batch mean as
    # rewards/{reward_func_name} (no /mean): real16's GRPO run lost its components to it
    n = 30
    run = _run({"reward": [0.5] * n, "rewards/numeric": [-3.0] * n, "rewards/xml": list(np.linspace(0.4, 0.5, n)), "completion_length": [80.0] * n, "kl": [0.01] * n})
    assert run.framework == "trl_grpo"
    assert run.mapping["rewards/numeric"] == "reward/fn/numeric/mean" and run.mapping["rewards/xml"] == "reward/fn/xml/mean"


def test_rsl_rl_and_skrl_rewards_are_100_episode_rolling_means():
    # rsl_rl: rewbuffer = deque(maxlen=100); skrl: _track_rewards = deque(maxlen=100).  A dip of
    # such a mean is no decisive collapse on a prefix: two healthy real16 legged-robot runs were
    # stopped live at dips their reward climbed back from
    from dataclasses import replace

    from ppo_doctor.rules.engine import run_rules
    from ppo_doctor.view import RunView

    n = 200
    dip = np.r_[np.linspace(0.0, 150.0, 100), np.full(60, 30.0), np.linspace(30.0, 100.0, 40)][:150]
    for tag in ("Train/mean_reward", "Reward / Total reward (mean)"):
        run = replace(_run({tag: list(dip), "Loss/surrogate": [0.01] * len(dip)}), planned_steps=n, live=True)
        assert RunView(run).returns.rolling == 100
        findings, _ = run_rules(run)
        assert all(f.severity == "info" for f in findings if f.code == "PD204")


def test_rl_games_statistics_are_read_and_their_epoch_and_seconds_copies_left_off():
    # rl_games (IsaacGymEnvs) writes rewards/step against the frames played and the same mean as
    # rewards/iter (epochs) and rewards/time (seconds): blind set real18's five rl_games runs were
    # all "unknown, no reward" before this table
    from ppo_doctor.view import RunView

    n = 60
    frames = list(np.arange(1, n + 1) * 16384)
    series = {
        "rewards/step": list(np.linspace(-5.0, 40.0, n)),
        "episode_lengths/step": [300.0] * n,
        "losses/a_loss": [0.01] * n,
        "losses/c_loss": list(np.linspace(2.0, 0.2, n)),
        "losses/entropy": list(np.linspace(4.0, 2.0, n)),
        "info/kl": [0.008] * n,
        "info/last_lr": [3e-4] * n,
    }
    raw = _raw(series, steps=frames)
    for tag in ("rewards/iter", "episode_lengths/iter"):
        raw.series.append(RawSeries(tag=tag, steps=np.arange(1, n + 1), values=np.linspace(-5.0, 40.0, n)))
    raw.series.append(RawSeries(tag="rewards/time", steps=np.arange(1, n + 1) * 7, values=np.linspace(-5.0, 40.0, n)))
    run = build_run("r", "r", "tensorboard", [], raw)
    assert run.mapping["rewards/step"] == "reward/score" and run.mapping["info/kl"] == "kl/old"
    assert run.mapping["losses/a_loss"] == "loss/policy" and run.mapping["losses/c_loss"] == "loss/value"
    assert run.frame.step_range() == (16384, n * 16384)
    assert not {"rewards/iter", "rewards/time", "episode_lengths/iter"} & set(run.frame.metrics)
    assert RunView(run).returns.rolling == 100


def test_sample_factory_kl_is_to_the_behaviour_policy_not_a_reference():
    # Sample Factory's learner logs train/kl_divergence = KL(behaviour policy || trained policy)
    # (kl_old), and reward/reward is a mean of the last 100 episodes: blind set real20's two
    # Sample Factory runs had their update KL read as a KL to a reference
    from ppo_doctor.view import RunView

    n = 40
    run = _run(
        {
            "reward/reward": list(np.linspace(-35.0, -4.0, n)),
            "len/len": [800.0] * n,
            "train/kl_divergence": [0.02] * n,
            "train/fraction_clipped": [0.2] * n,
            "train/entropy": list(np.linspace(5.0, 3.0, n)),
            "train/value_loss": [0.3] * n,
            "train/grad_norm": [1.0] * n,
        }
    )
    assert run.mapping["train/kl_divergence"] == "kl/old" and "kl/ref" not in run.frame.metrics
    assert run.mapping["reward/reward"] == "reward/score" and run.mapping["train/fraction_clipped"] == "policy/clipfrac"
    assert RunView(run).returns.rolling == 100


def test_actor_and_critic_losses_alone_are_not_deepspeed_chat():
    # any home-made actor-critic loop logs actor_loss, critic_loss and a reward (a LunarLander PPO
    # of the labelled set real10); DeepSpeed-Chat is told by its own *_sum tags
    from ppo_doctor.view import RunView

    n = 30
    series = {"actor_loss": [0.1] * n, "critic_loss": [5.0] * n, "reward": list(np.linspace(-200.0, 100.0, n))}
    run = _run(series)
    assert run.framework == "unknown" and RunView(run).domain != "llm"
    ds = _run({**series, "actor_loss_sum": [3.2] * n, "critic_loss_sum": [160.0] * n})
    assert ds.framework == "deepspeed_chat"


def test_a_critic_with_a_kl_and_nothing_of_an_llm_loop_is_classic():
    # a home-made actor-critic PPO (Pokemon TCG, the labelled pool) logs a value loss and a
    # ``kl_divergence``: its KL is to the old policy, not to a reference model
    n = 30
    series = {"train/v_loss": [1.0] * n, "train/pg_loss": [0.1] * n, "train/kl_divergence": [0.01] * n, "metrics/ep_reward": list(np.linspace(0.0, 1.0, n))}
    assert _run(series).mapping["train/kl_divergence"] == "kl/old"
    # the same names beside a response length are an LLM PPO loop's: the KL is to the reference
    llm = _run({**series, "completion_length_mean": [40.0] * n})
    assert llm.mapping["train/kl_divergence"] == "kl/ref"


def test_an_sb3_off_policy_log_is_sb3_not_deepspeed_chat():
    # SB3's DDPG / TD3 / SAC write train/actor_loss and train/critic_loss (DeepSpeed-Chat's names)
    # and none of PPO's train/* names; the logger's time/* bookkeeping says SB3 (blind set real19)
    n = 30
    run = _run(
        {
            "time/time_elapsed": list(range(1, n + 1)),
            "rollout/ep_rew_mean": list(np.linspace(-4000.0, -3000.0, n)),
            "rollout/ep_len_mean": [781.0] * n,
            "time/episodes": list(range(1, n + 1)),
            "time/total_timesteps": [781.0 * (i + 1) for i in range(n)],
            "time/fps": [100.0] * n,
            "train/n_updates": [781.0 * i for i in range(n)],
            "train/actor_loss": [1.8] * n,
            "train/learning_rate": [1e-3] * n,
            "train/critic_loss": list(np.linspace(17.0, 5.0, n)),
        }
    )
    assert run.framework == "sb3"
    assert run.mapping["rollout/ep_rew_mean"] == "reward/score" and run.mapping["train/critic_loss"] == "loss/value"


# -- evaluation rows marked by a phase key ------------------------------------------------------
def _phase_log(path: Path, key: str, eval_phase: str, games: int = 5) -> None:
    """A home-made loop's JSON lines: one training row per step, and every 10 steps one row per
    evaluated game under the same keys, its phase named by ``key`` (the shape of a Wordle GRPO
    loop of blind set real47: ``log_type`` train / eval)."""
    rows = []
    for step in range(1, 61):
        rows.append({key: "train", "step": step, "solved": step % 3 == 0, "final_reward": 0.1 * step, "loss": 1.0 / step})
        if step % 10 == 0:
            rows += [{key: eval_phase, "step": step, "solved": g < step // 10, "final_reward": -1.0} for g in range(games)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(("key", "phase"), [("log_type", "eval"), ("split", "val"), ("mode", "test"), ("phase", "Validation")])
def test_rows_of_an_evaluation_phase_are_the_held_out_series(tmp_path, key, phase):
    f = tmp_path / "metrics.jsonl"
    _phase_log(f, key, phase)
    (run,) = load(f).runs
    # the training series hold the training rows alone: one point per step, none of the -1.0 games
    steps, values = run.frame.arrays("reward/score")
    assert len(steps) == 60 and values.min() > 0
    # the evaluation rows are the held-out series, one mean per step over its games
    ev_steps, solved = run.eval_frame.arrays("solved")
    assert ev_steps.tolist() == [10, 20, 30, 40, 50, 60]
    assert np.allclose(solved, [0.2, 0.4, 0.6, 0.8, 1.0, 1.0])
    assert any(f"whose '{key}' names an evaluation phase" in i.message and i.level == "info" for i in run.issues)


def test_phase_names_with_no_evaluation_among_them_are_training_rows(tmp_path):
    """A curriculum's stage names (``"L1 no walls"``, ``"P1-warmup"``) mark no held-out rows."""
    f = tmp_path / "log.jsonl"
    f.write_text("".join(json.dumps({"phase": "warmup" if i < 20 else "main", "step": i, "reward": i}) + "\n" for i in range(40)))
    (run,) = load(f).runs
    assert run.eval_frame is None and len(run.frame.arrays("reward/score")[0]) == 40


def test_an_evaluation_step_with_no_finite_value_keeps_it():
    """A mean over an evaluation's games skips NaN, but a step where every game is NaN keeps the
    NaN: a non-finite evaluation is a measurement (PD601), not an absence."""
    from ppo_doctor.ingest.tabular import mean_per_step

    s = mean_per_step(RawSeries("solved", np.array([10, 10, 20, 20, 30]), np.array([1.0, np.nan, np.nan, np.nan, 0.5])))
    assert s.steps.tolist() == [10, 20, 30]
    assert s.values[0] == 1.0 and np.isnan(s.values[1]) and s.values[2] == 0.5


def test_a_log_of_a_task_metric_alone_is_judged_on_it():
    """No reward, KL or loss, only a per-game solve rate over 60 steps and its evaluations: the
    task is what the verdict rests on (PD212), so the run is judged, not unknown."""
    from ppo_doctor.analyze import analyze_run
    from ppo_doctor.rules.examples import saturating

    report = analyze_run(_run({"train/solve_rate": saturating(60, 0.1, 0.6, sd=0.02, seed=3).tolist()}))
    assert report.verdict == "healthy"
    stuck = analyze_run(_run({"train/solve_rate": [0.1, 0.12, 0.08, 0.11] * 15}))
    assert stuck.verdict == "unhealthy" and {f.code for f in stuck.findings} >= {"PD212"}

"""ppo_doctor.canonical.frameworks: one classification of runs (LLM / classic RL / unknown) used by the
rules and the diagnosis, framework ids compared whole, and one home for eval-series prefixes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ppo_doctor.canonical import frameworks
from ppo_doctor.frame import RawRun, RawSeries, TextSample
from ppo_doctor.ingest.readers import csv_logs, jsonl
from ppo_doctor import load_runs
from ppo_doctor.canonical.metrics import build_run
from ppo_doctor.view import RunView


def _run(tags: dict[str, list[float]], texts: bool = False, run_id: str = "r"):
    raw = RawRun(
        series=[RawSeries(tag=t, steps=np.arange(len(v)), values=np.asarray(v, float), source="t") for t, v in tags.items()],
        texts=[TextSample(step=k, tag="samples", text="hello", source="t") for k in (0, 1)] if texts else [],
    )
    return build_run(run_id, f"/tmp/{run_id}", "test", [f"/tmp/{run_id}/f"], raw)


def test_every_framework_id_has_exactly_one_domain():
    for fw in frameworks.FRAMEWORKS:
        d = frameworks.domain(fw)
        assert (d == "classic") == (fw in frameworks.CLASSIC_RL_FRAMEWORKS)
        assert (d == "llm") == (fw in frameworks.LLM_FRAMEWORKS)
    assert frameworks.domain("unknown") == "unknown"
    assert frameworks.CLASSIC_RL_FRAMEWORKS.isdisjoint(frameworks.LLM_FRAMEWORKS)
    assert frameworks.GRPO_FRAMEWORKS <= frameworks.LLM_FRAMEWORKS


@pytest.mark.parametrize("name", ["gymnastics-llm", "gym", "stable-llm", "classic_trl", "baselines", "my-sb3-port"])
def test_made_up_names_are_never_matched_as_substrings(name):
    """The old rule helper took any framework string containing "gym", "stable", "classic",
    "baselines", "sb3" ... for classic RL; a name decides nothing unless it is a known id."""
    assert frameworks.domain(name) == "unknown"
    assert frameworks.domain(name, lambda m: m == "kl/ref") == "llm"


def test_rules_and_diagnosis_classify_alike():
    """The rules' helpers and the diagnosis' recipes read the same classification."""
    cases = {
        "sb3": _run({"rollout/ep_rew_mean": [1.0, 2.0], "train/approx_kl": [0.01, 0.02], "train/clip_range": [0.2, 0.2]}),
        "llm by framework": _run({"objective/kl": [0.1, 0.2], "objective/scores": [1.0, 2.0], "loss/policy_avg": [0.1, 0.1], "val/clipfrac_avg": [0.1, 0.1]}),
        "llm by metric": _run({"reward_mean": [1.0, 2.0], "response_length": [10.0, 12.0]}),
        "llm by texts": _run({"reward_mean": [1.0, 2.0]}, texts=True),
        "unknown": _run({"reward_mean": [1.0, 2.0], "loss": [0.5, 0.4]}),
    }
    want = {"sb3": "classic", "llm by framework": "llm", "llm by metric": "llm", "llm by texts": "llm", "unknown": "unknown"}
    for name, run in cases.items():
        got = frameworks.domain(run.framework, run.frame.has, texts=run.generates_text)
        assert got == want[name], (name, run.framework, sorted(run.metric_info))
        assert RunView(run).domain == got  # the one domain rules and diagnosis read
        assert RunView(run).is_classic_rl == (got == "classic")
        assert RunView(run).is_llm_rl == (got == "llm")


def test_text_written_once_is_a_note_not_a_generated_sample():
    # a home-made PPO's TensorBoard settings (algo/text_summary, env_name/text_summary ...) and
    # ML-Agents' Hyperparameters/text_summary: no mark of LLM RL
    raw = RawRun(
        series=[RawSeries(tag="reward_mean", steps=np.arange(2), values=np.array([1.0, 2.0]), source="t")],
        texts=[TextSample(step=0, tag=f"{k}/text_summary", text="v", source="t") for k in ("algo", "env_name", "device")],
    )
    run = build_run("r", "/tmp/r", "test", ["/tmp/r/f"], raw)
    assert not run.generates_text and RunView(run).domain == "unknown"
    dump = RawRun(series=raw.series, texts=[TextSample(step=k, tag="Hyperparameters/text_summary", text="lr: 3e-4", source="t") for k in (0, 9)])
    assert build_run("r", "/tmp/r", "test", ["/tmp/r/f"], dump).texts == []  # a settings dump is never a sample


def test_grpo_is_told_by_id():
    run = _run({"reward": [1.0, 2.0]})
    for fw in frameworks.FRAMEWORKS:
        run.framework = fw
        assert RunView(run).is_grpo == (fw in ("trl_grpo", "trl_async_grpo"))


def test_a_run_folder_called_gymnastics_llm_is_not_classic_rl(tmp_path):
    """End to end: the folder's name, which contains "gym", changes nothing."""
    folder = tmp_path / "gymnastics-llm"
    folder.mkdir()
    rows = [{"step": i, "reward_mean": 0.1 * i, "kl": 0.01 * i, "response_length": 40 + i} for i in range(30)]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run,) = load_runs(folder)
    assert run.framework == "unknown"
    assert "gymnastics-llm" in run.id or "gymnastics-llm" in run.path
    assert not RunView(run).is_classic_rl
    assert RunView(run).is_llm_rl
    assert RunView(run).domain == "llm"


def test_one_list_of_eval_prefixes_for_key_value_logs():
    for key in ("eval/reward", "eval_loss", "test/kl", "val-core/acc", "val-aux/score", "validation/reward"):
        assert frameworks.is_eval_key(key)
    # TRL's val/ is the value head, not validation; only veRL's console log reads it as eval
    assert not frameworks.is_eval_key("val/clipfrac_avg")
    assert "val/" in frameworks.VERL_CONSOLE_EVAL_PREFIXES
    assert frameworks.strip_eval_prefix("eval_reward") == "reward"
    assert frameworks.strip_eval_prefix("eval/") == "eval/"


def test_jsonl_and_csv_readers_route_the_same_eval_keys(tmp_path):
    """Both read their eval keys through frameworks.is_eval_key: the same columns land in
    eval_series whatever the file format."""
    keys = ["reward", "val/ratio", "eval_reward", "val-core/acc", "validation/kl"]
    rows = [{"step": i, **{k: float(i) for k in keys}} for i in range(5)]
    jpath = tmp_path / "log.jsonl"
    jpath.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cpath = tmp_path / "progress.csv"
    cpath.write_text(",".join(["step", *keys]) + "\n" + "".join(",".join(str(r[k]) for k in ["step", *keys]) + "\n" for r in rows))
    for reader, path in ((jsonl, jpath), (csv_logs, cpath)):
        (raw,) = reader.read(path)
        assert sorted(s.tag for s in raw.eval_series) == ["eval_reward", "val-core/acc", "validation/kl"], reader.NAME
        assert sorted(s.tag for s in raw.series) == ["reward", "val/ratio"], reader.NAME


def test_spinning_up_progress_txt_is_read_with_its_names(tmp_path):
    """OpenAI Spinning Up's EpochLogger writes a tab-separated progress.txt (spinup/utils/logx.py,
    the keys of spinup/algos/pytorch/ppo/ppo.py): AverageEpRet is the reward, KL the old-vs-new
    approx KL, TotalEnvInteracts the step (docs/sources.md#spinning-up-logger-keys)."""
    cols = ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet", "EpLen", "AverageVVals", "StdVVals",
            "MaxVVals", "MinVVals", "TotalEnvInteracts", "LossPi", "LossV", "DeltaLossPi", "DeltaLossV",
            "Entropy", "KL", "ClipFrac", "StopIter", "Time"]
    rows = ["\t".join(cols)]
    for e in range(40):
        ret = -400 + 20 * e
        rows.append("\t".join(str(x) for x in [e, ret, 60, ret + 90, ret - 90, 1000, ret / 10, 3, 9, -9,
                                                 (e + 1) * 4000, 0.01, 400 - 5 * e, -0.01, -50, 0.9 - 0.005 * e,
                                                 0.008, 0.05, 79, 5.0 * (e + 1)]))
    folder = tmp_path / "ppo_s0"
    folder.mkdir()
    (folder / "progress.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (run,) = load_runs(folder)
    steps, reward = run.frame.arrays("reward/score")
    assert steps[0] == 4000 and steps[-1] == 160000 and reward[-1] == 380
    for metric in ("kl/old", "policy/entropy", "policy/clipfrac", "loss/policy", "loss/value", "value/mean", "reward/std"):
        assert run.frame.has(metric), metric
    assert run.metric_info["kl/old"].between == "old"


def test_baselines_ppo1_tabular_names_are_read(tmp_path):
    """OpenAI baselines ppo1 (pposgd_simple.py) logs EpRewMean (the last 100 episodes), the
    losses as loss_<name> (loss_kl: old vs new policy), ev_tdlam_before and TimestepsSoFar."""
    header = "loss_pol_surr,loss_pol_entpen,loss_vf_loss,loss_kl,loss_ent,ev_tdlam_before,EpLenMean,EpRewMean,EpThisIter,EpisodesSoFar,TimestepsSoFar,TimeElapsed"
    rows = [header] + [
        f"-0.01,-0.0,{50 - i},{0.01 + i * 1e-4},{2.8 - 0.01 * i},{0.2 + 0.005 * i},200,{-300 + 5 * i},10,{10 * (i + 1)},{2048 * (i + 1)},{i}"
        for i in range(60)
    ]
    folder = tmp_path / "ppo1"
    folder.mkdir()
    (folder / "progress.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (run,) = load_runs(folder)
    steps, reward = run.frame.arrays("reward/score")
    assert steps[0] == 2048 and reward[-1] == -300 + 5 * 59
    assert run.mapping["loss_kl"] == "kl/old" and run.mapping["ev_tdlam_before"] == "value/explained_var"
    assert run.frame.has("policy/entropy") and run.frame.has("loss/value")


def test_spinning_up_off_policy_critics_are_the_value_function(tmp_path):
    """Spinning Up's DDPG and TD3 log their Q-function's TD loss as LossQ and its predictions as
    AverageQVals; SAC and TD3 variants with twin critics LossQ1 / AverageQ1Vals (spinup/algos/
    pytorch/{ddpg,td3,sac}): the critic's loss and mean prediction, as LossV / AverageVVals are
    PPO's (docs/sources.md#spinning-up-logger-keys).  A twin's second Q-function is not mapped."""
    for keys in (("LossQ", "AverageQVals"), ("LossQ1", "AverageQ1Vals")):
        cols = ["Epoch", "AverageEpRet", "TotalEnvInteracts", "LossPi", *keys]
        rows = ["\t".join(cols)] + ["\t".join(str(x) for x in [e, 10.0 * e, 4000 * (e + 1), -float(e), 1.0 + e, 2.0 * e]) for e in range(30)]
        folder = tmp_path / keys[0]
        folder.mkdir()
        (folder / "progress.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
        (run,) = load_runs(folder)
        assert run.mapping[keys[0]] == "loss/value" and run.mapping[keys[1]] == "value/mean", keys


def test_sb3_dqn_train_loss_is_the_q_networks_td_loss():
    """SB3's DQN logs rollout/exploration_rate (dqn.py ``_on_step``), no other SB3 algorithm
    does; its train/loss is the TD loss of the Q-network (dqn.py ``train``), the critic's loss.
    PPO's train/loss stays the total of its policy, value and entropy terms."""
    common = {"rollout/ep_rew_mean": [1.0, 2.0, 3.0], "rollout/ep_len_mean": [10.0, 11.0, 12.0], "train/loss": [0.5, 0.4, 0.6]}
    dqn = _run({**common, "rollout/exploration_rate": [1.0, 0.5, 0.05], "train/n_updates": [1.0, 2.0, 3.0]})
    ppo = _run({**common, "train/approx_kl": [0.01, 0.02, 0.01], "train/clip_fraction": [0.1, 0.1, 0.1], "train/value_loss": [1.0, 0.8, 0.7]})
    assert dqn.framework == ppo.framework == "sb3"
    assert dqn.mapping["train/loss"] == "loss/value" and ppo.mapping["train/loss"] == "loss/total"


def test_a_q_learning_agents_loss_is_its_critics():
    """keras-rl's DQNAgent writes ``loss`` (its Q-network's TD loss) beside ``mean_q`` (its mean
    prediction) and the episode reward; the CS285 homework logger writes ``q_values``; CleanRL's
    off-policy scripts ``losses/td_loss`` / ``losses/q_values`` and ``losses/qf_loss`` /
    ``losses/qf1_values``.  They are the critic's loss and mean estimate.  A classic log with a bare
    ``loss`` and no Q estimate keeps it as a total."""
    common = {"episode_reward": [1.0, 2.0, 3.0], "nb_episode_steps": [10.0, 11.0, 12.0], "loss": [0.5, 0.4, 0.6]}
    kerasrl = _run({**common, "mean_q": [0.1, 0.2, 0.3], "mean_eps": [1.0, 0.5, 0.1]})
    plain = _run(common)
    assert kerasrl.mapping["loss"] == "loss/value" and kerasrl.mapping["mean_q"] == "value/mean"
    assert plain.mapping["loss"] == "loss/total"
    cleanrl = _run({"charts/episodic_return": [1.0, 2.0, 3.0], "charts/episodic_length": [9.0, 9.0, 9.0], "charts/SPS": [99.0, 98.0, 97.0], "losses/td_loss": [0.5, 0.4, 0.6], "losses/q_values": [1.0, 2.0, 3.0]})
    assert cleanrl.framework == "cleanrl" and cleanrl.mapping["losses/td_loss"] == "loss/value" and cleanrl.mapping["losses/q_values"] == "value/mean"


def test_one_borrowed_name_is_no_fingerprint():
    # a CS336 GRPO loop logs SB3's train/clip_fraction beside its own names: it is not SB3, so
    # not classic RL (issue 37: "a guess is not a fact"); SB3's own logs carry several of its names
    cs336 = ["grpo_step", "train/clip_fraction", "train/entropy", "train/grad_norm", "train/loss", "train/reward_mean"]
    assert frameworks.guess_framework(cs336) == "unknown"
    assert frameworks.guess_framework(["train/clip_fraction", "train/approx_kl", "rollout/ep_rew_mean"]) == "sb3"
    # a trainer's own settings tree is proof alone
    assert frameworks.guess_framework(["reward"], {"actor_rollout_ref.actor.optim.lr": 1e-6}) == "verl"

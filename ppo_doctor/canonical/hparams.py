"""Hyper-parameter normalisation: every framework's config naming -> one canonical vocabulary.

Readers hand over whatever configuration they found (TRL ``PPOConfig``/``GRPOConfig`` as
``hparams.yml`` or HF ``args`` text, OpenRLHF argparse namespaces, veRL's hydra tree, trlx
``method.*``/``train.*``, CleanRL args, SB3 constructor arguments, W&B ``config.yaml``,
MLflow params as strings).  :func:`flatten_config` turns it into one flat ``{dotted.key:
value}`` dict and :func:`normalize_config` picks the canonical keys listed in
:data:`HPARAMS` out of it, framework-aware where the same name means different things
(SB3's ``batch_size`` is a minibatch; ``target_kl`` is an early-stop threshold in
SB3/CleanRL/TRL-legacy but the adaptive-controller target elsewhere).

Nothing here evaluates input: strings are parsed as numbers/booleans/JSON, and Python-repr
literals (veRL and TRL print their configs that way) only through ``ast.literal_eval``,
which accepts literals and never names, calls or attribute access.
"""

from __future__ import annotations

import ast
import json
import math
import re
from types import MappingProxyType
from typing import Any, Iterable, Mapping, NamedTuple

# Untrusted input: bound the work spent on one config.
MAX_DEPTH = 12
MAX_KEYS = 20_000
MAX_LITERAL_CHARS = 50_000

# Flattened-key components that make a generic name refer to another model or phase: the
# critic's ``optim.lr`` is not the policy LR, veRL's ``rollout.val_kwargs.top_k`` is the
# validation sampler, OpenRLHF's ``reward_model`` section is not the policy, and the HF
# ``model_config`` text (transformers 4.x PretrainedConfig) carries default generation
# attributes (top_k 50, do_sample False) that are not the rollout settings.
FOREIGN_COMPONENTS = frozenset(
    {
        "model_config",
        "task_specific_params",
        "critic",
        "value",
        "vf",
        "value_model",
        "reward",
        "reward_model",
        "rm",
        "ref",
        "ref_model",
        "reference",
        "discriminator",
        "teacher",
        "val_kwargs",
        "eval",
        "evaluation",
        "val",
        "test",
        "scheduler",
        "lr_scheduler",
    }
)


# Sampling temperatures far from the 0.6-1.0 that RL recipes sample at (DeepSeek-R1 0.6, DAPO
# and TRL's default 1.0): at 0.3 or below the policy's distribution is sharpened to near-greedy
# (p^(1/T)), at 2 or above flattened toward uniform; either way the samples no longer show what
# the policy would do (GRPOTrainer's ``temperature``).
GREEDY_TEMPERATURE = 0.3
HOT_TEMPERATURE = 2.0


def temperature_regime(temperature: float | None) -> str | None:
    """"greedy" or "hot" for a sampling temperature far from 1 (see above), else None."""
    if temperature is None or not temperature > 0:
        return None
    if temperature <= GREEDY_TEMPERATURE:
        return "greedy"
    return "hot" if temperature >= HOT_TEMPERATURE else None

# Estimator spellings in configs -> MetricInfo estimator ids (docs/sources.md#kl-estimators).
ESTIMATOR_NAMES = {
    "kl": "k1",
    "k1": "k1",
    "abs": "abs",
    "mse": "k2",
    "k2": "k2",
    "low_var_kl": "k3",
    "k3": "k3",
    "full": "full",
}


class HParam(NamedTuple):
    """One canonical hyper-parameter and the names frameworks give it.

    ``names`` are dotted suffixes tried in priority order; ``by_framework`` replaces
    ``names`` for a framework whose naming differs (an empty tuple = never read generically).
    """

    key: str
    kind: str  # float | int | bool | str | estimator
    doc: str
    names: tuple[str, ...]
    # read-only: the default is one empty mapping shared by every entry
    by_framework: Mapping[str, tuple[str, ...]] = MappingProxyType({})


HPARAMS: tuple[HParam, ...] = (
    HParam(
        "lr",
        "float",
        "policy (actor) learning rate",
        (
            "actor_rollout_ref.actor.optim.lr",
            "actor.optim.lr",
            "actor_learning_rate",
            "actor_lr",
            "policy_lr",
            "pi_lr",
            "learning_rate",
            "optimizer.kwargs.lr",
            "optim.lr",
            "lr",
        ),
    ),
    HParam(
        "value_lr",
        "float",
        "critic / value-head learning rate when separate",
        (
            "critic.optim.lr",
            "critic_learning_rate",
            "critic_lr",
            "value_lr",
            "vf_lr",
            "value_learning_rate",
        ),
    ),
    HParam(
        "kl_coef",
        "float",
        "KL penalty coefficient beta (initial value when adaptive); 0 = no KL term",
        (
            "kl_coef",
            "init_kl_coef",
            "method.init_kl_coef",
            "beta",
            "kl_penalty_coef",
            "kl_loss_coef",
            "kl_ctl",
            "kl_penalty_weight",
        ),
        # veRL: decided in _verl_kl (loss vs reward KL); tinker's kl_penalty_coef is generic.
        by_framework={"verl": ()},
    ),
    HParam(
        "adaptive_kl",
        "bool",
        "adaptive KL controller on (Ziegler et al. 2019)",
        ("adap_kl_ctrl", "adaptive_kl_ctrl", "adaptive_kl"),
    ),
    HParam(
        "target_kl",
        "float",
        "target of the adaptive KL controller (policy vs reference, TRL default 6)",
        ("kl_target", "adap_kl_target", "algorithm.kl_ctrl.target_kl", "method.target"),
        # TRL legacy calls it plain ``target`` (too generic to read elsewhere); in SB3/CleanRL
        # ``target_kl`` is the old-vs-new early-stop threshold (early_stop_kl), not this.
        by_framework={"trl_legacy": ("target",), "sb3": (), "cleanrl": ()},
    ),
    HParam(
        "early_stop_kl",
        "float",
        "old-vs-new approx-KL threshold that stops the PPO epochs early",
        ("early_stop_kl",),
        by_framework={
            "sb3": ("target_kl",),
            "cleanrl": ("target_kl",),
            "trl_legacy": ("target_kl",),
        },
    ),
    HParam(
        "ppo_epochs",
        "int",
        "optimisation epochs over each rollout batch",
        (
            "actor_rollout_ref.actor.ppo_epochs",
            "num_ppo_epochs",
            "ppo_epochs",
            "method.ppo_epochs",
            "max_epochs",
            "n_epochs",
            "update_epochs",
            "num_iterations",
        ),
    ),
    HParam(
        "num_mini_batches",
        "int",
        "minibatches (gradient steps) per epoch",
        ("num_mini_batches", "num_minibatches", "mini_batch_per_epoch"),
    ),
    HParam(
        "batch_size",
        "int",
        "rollout batch: samples (prompts or env steps) collected per PPO update",
        ("data.train_batch_size", "rollout_batch_size", "method.num_rollouts", "batch_size"),
        by_framework={
            "sb3": ("n_steps",),
            "openrlhf": ("rollout_batch_size",),
        },
    ),
    HParam(
        "mini_batch_size",
        "int",
        "samples per gradient step",
        (
            "actor_rollout_ref.actor.ppo_mini_batch_size",
            "mini_batch_size",
            "minibatch_size",
        ),
        by_framework={
            "sb3": ("batch_size",),
            "openrlhf": ("train_batch_size",),
        },
    ),
    HParam(
        "cliprange",
        "float",
        "PPO ratio clip epsilon",
        (
            "actor_rollout_ref.actor.clip_ratio",
            "cliprange",
            "method.cliprange",
            "clip_range",
            "clip_coef",
            "eps_clip",
            "clip_ratio",
        ),
    ),
    HParam(
        "cliprange_value",
        "float",
        "value-function clip range",
        ("critic.cliprange_value", "cliprange_value", "method.cliprange_value", "value_clip", "clip_range_vf"),
    ),
    HParam("vf_coef", "float", "value-loss weight in the total loss", ("vf_coef", "method.vf_coef", "value_coef", "value_loss_coef")),
    HParam(
        "entropy_coef",
        "float",
        "entropy bonus weight",
        ("actor_rollout_ref.actor.entropy_coeff", "ent_coef", "entropy_coef", "entropy_coeff", "entropy_loss_coef"),
    ),
    HParam(
        "max_grad_norm",
        "float",
        "gradient-norm clip (None/0 = no clipping)",
        (
            "actor_rollout_ref.actor.grad_clip",
            "max_grad_norm",
            "grad_clip",
            "grad_clip_norm",
            "optim.max_norm",
            "gradient_clipping",
            "clip_grad_norm",
        ),
    ),
    HParam("gamma", "float", "discount factor", ("algorithm.gamma", "gamma", "method.gamma")),
    HParam("lam", "float", "GAE lambda", ("algorithm.lam", "lam", "lambd", "gae_lambda", "method.lam", "lmbda")),
    HParam(
        "temperature",
        "float",
        "sampling temperature used for rollouts",
        ("actor_rollout_ref.rollout.temperature", "temperature", "method.gen_kwargs.temperature"),
    ),
    HParam("top_k", "int", "rollout top-k (0 = off; vLLM's -1 is normalised to 0)", ("actor_rollout_ref.rollout.top_k", "top_k", "method.gen_kwargs.top_k")),
    HParam("top_p", "float", "rollout nucleus top-p (1.0 = off)", ("actor_rollout_ref.rollout.top_p", "top_p", "method.gen_kwargs.top_p")),
    HParam("min_length", "int", "generate(min_length): suppresses EOS until reached (-1/0 = off)", ("min_length", "method.gen_kwargs.min_length")),
    HParam(
        "min_new_tokens",
        "int",
        "generate(min_new_tokens) / vLLM min_tokens (0 = off)",
        ("min_new_tokens", "min_tokens", "method.gen_kwargs.min_new_tokens"),
    ),
    HParam("do_sample", "bool", "sampling on (False = greedy/beam: samples are not from the policy)", ("actor_rollout_ref.rollout.do_sample", "do_sample", "method.gen_kwargs.do_sample")),
    HParam(
        "max_new_tokens",
        "int",
        "response length cap",
        (
            "data.max_response_length",
            "max_new_tokens",
            "response_length",
            "max_completion_length",
            "generate_max_len",
            "max_tokens",
            "method.gen_kwargs.max_new_tokens",
        ),
    ),
    HParam(
        "whiten_rewards",
        "bool",
        "rewards normalised per batch (whitened / running mean-std)",
        ("whiten_rewards", "normalize_reward", "normalize_rew", "use_reward_norm", "reward_norm"),
    ),
    HParam("reward_scale", "float", "constant reward multiplier", ("reward_scale", "reward_scaling", "scale_reward")),
    HParam(
        "reward_clip",
        "float",
        "reward clipped to [-x, x] (None = no clipping)",
        ("reward_clip", "cliprange_reward", "method.cliprange_reward", "reward_clip_range", "score_clip", "clip_reward_value"),
    ),
    HParam(
        "kl_estimator",
        "estimator",
        "estimator of the (reward) policy-vs-reference KL: k1, k2, k3, abs or full",
        ("kl_estimator", "kl_penalty", "algorithm.kl_penalty"),
    ),
    HParam("kl_loss_estimator", "estimator", "veRL actor KL-loss estimator (kl_loss_type)", ("actor_rollout_ref.actor.kl_loss_type", "kl_loss_type")),
    HParam("num_generations", "int", "samples per prompt (GRPO/RLOO group size)", ("num_generations", "n_samples_per_prompt", "rloo_k", "group_size", "actor_rollout_ref.rollout.n")),
    HParam(
        "init_from",
        "str",
        "checkpoint the policy starts from (should be the SFT model)",
        (
            "actor_rollout_ref.model.path",
            "sft_model_path",
            "model_name_or_path",
            "model_name",
            "pretrain",
            "model.model_path",
            "model.name",
            "policy_model",
        ),
    ),
    HParam("ref_model", "str", "reference policy checkpoint for the KL term", ("ref_pretrain", "ref_model_path", "ref_model_name", "ref_model")),
    HParam(
        "adv_estimator",
        "str",
        "advantage estimator: gae (with a critic) or a critic-free one (grpo, rloo, reinforce_plus_plus, group_norm ...)",
        ("algorithm.adv_estimator", "adv_estimator", "algo.advantage.estimator", "advantage_estimator"),
    ),
)

HPARAM_KEYS = tuple(h.key for h in HPARAMS)
_BY_KEY = {h.key: h for h in HPARAMS}


# -- flattening ------------------------------------------------------------------------------
def flatten_config(config: Any, issues: list[str] | None = None) -> dict[str, Any]:
    """Flatten nested config into ``{"a.b.c": value}``.

    W&B ``config.yaml`` entries ``{desc, value}`` are unwrapped, ``_wandb``/``wandb_version``
    dropped, JSON or Python-literal strings holding a dict (HF ``args`` text, veRL's printed
    config) and CleanRL's markdown ``|param|value|`` table are expanded in place.
    """
    out: dict[str, Any] = {}
    notes = issues if issues is not None else []
    truncated: list[str] = []

    def put(key: str, value: Any) -> None:
        if len(out) >= MAX_KEYS:
            if not truncated:
                truncated.append(key)
                notes.append(f"config has more than {MAX_KEYS} keys; the rest was ignored")
            return
        out[key] = value

    def walk(prefix: str, value: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            notes.append(f"config nested deeper than {MAX_DEPTH} levels under {prefix!r}; ignored")
            return
        if isinstance(value, dict):
            if set(value) <= {"desc", "value"} and "value" in value:  # W&B config.yaml entry
                walk(prefix, value["value"], depth + 1)
                return
            for k, v in value.items():
                k = str(k)
                if k in ("_wandb", "wandb_version") and not prefix:
                    continue
                walk(f"{prefix}.{k}" if prefix else k, v, depth + 1)
            return
        if isinstance(value, str):
            expanded = _expand_string(value)
            if expanded is not None:
                walk(prefix, expanded, depth + 1)
                return
        if prefix:
            put(prefix, value)

    walk("", config, 0)
    return out


_MD_ROW = re.compile(r"^\s*\|([^|]*)\|([^|]*)\|\s*$")


def _expand_string(text: str) -> dict | None:
    """A dict hidden in a string (JSON, Python literal, markdown table), else None."""
    s = text.strip()
    if not s or len(s) > MAX_LITERAL_CHARS:
        return None
    if s[0] == "{":
        try:
            val = json.loads(s)
        except ValueError:
            try:
                # Python-repr configs (veRL console, TRL prints). literal_eval only builds
                # literals: no names, calls or attribute access can run.
                val = ast.literal_eval(s)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None
        return val if isinstance(val, dict) else None
    if s[0] == "|" and "\n" in s:
        # CleanRL writes its args as a markdown table: |param|value|\n|-|-|\n|lr|0.00025|
        rows: dict[str, str] = {}
        for line in s.splitlines():
            m = _MD_ROW.match(line)
            if not m:
                continue
            k, v = m.group(1).strip(), m.group(2).strip()
            if not k or k == "param" or set(k) <= {"-", ":"}:
                continue
            rows[k] = v
        return rows or None
    return None


# -- value parsing ---------------------------------------------------------------------------
_NONE_STRINGS = {"none", "null", "nil", ""}
_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}


def parse_scalar(value: Any) -> Any:
    """Strings as MLflow/YAML leave them ("1e-05", "True", "None") -> Python values."""
    if not isinstance(value, str):
        return value
    s = value.strip()
    low = s.lower()
    if low in _NONE_STRINGS:
        return None
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        pass
    if s[:1] in "[(" and len(s) <= MAX_LITERAL_CHARS:
        try:
            return json.loads(s.replace("(", "[").replace(")", "]"))
        except (ValueError, RecursionError):
            return s
    return s


def scalar_float(v: Any) -> float | None:
    """A config value as a finite float: numbers, and strings as MLflow/YAML leave them
    (``"1e-5"``); None for booleans, None, lists, non-numbers and NaN/Inf.  The one reader of a
    numeric setting (configs, rule inputs, run plans, device counts)."""
    v = parse_scalar(v)
    if isinstance(v, (bool, list, tuple, dict)) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


def _as_float(v: Any) -> float | None:
    v = parse_scalar(v)
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (list, tuple)):
        # a symmetric range such as OpenRLHF's reward_clip_range (-10, 10) -> its bound
        parsed = [_as_float(x) for x in v if not isinstance(x, (list, tuple, dict))]
        nums = [x for x in parsed if x is not None]
        return max(abs(x) for x in nums) if nums else None
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


def _as_int(v: Any) -> int | None:
    f = _as_float(v)
    return int(f) if f is not None and f == int(f) else None


def _as_bool(v: Any) -> bool | None:
    v = parse_scalar(v)
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    return None


def _as_str(v: Any) -> str | None:
    v = parse_scalar(v)
    return v if isinstance(v, str) and v else None


def _as_estimator(v: Any) -> str | None:
    s = _as_str(v)
    return ESTIMATOR_NAMES.get(s.lower()) if s else None


_CONVERT = {"float": _as_float, "int": _as_int, "bool": _as_bool, "str": _as_str, "estimator": _as_estimator}


# -- lookup ----------------------------------------------------------------------------------
def _match_keys(flat_keys: Iterable[str], pattern: str) -> list[str]:
    """Keys equal to ``pattern`` or ending in ``.pattern`` whose prefix is not foreign."""
    hits = []
    for key in flat_keys:
        norm = key.replace("/", ".")
        if norm == pattern:
            hits.append(key)
        elif norm.endswith("." + pattern):
            prefix = norm[: -len(pattern) - 1].split(".")
            if not FOREIGN_COMPONENTS.intersection(prefix):
                hits.append(key)
    # the least nested spelling wins (``temperature`` over ``x.y.temperature``); ties by name
    return sorted(hits, key=lambda k: (k.count(".") + k.count("/"), k))


def lookup(flat: dict[str, Any], names: Iterable[str]) -> tuple[str, Any] | None:
    """First ``(raw_key, value)`` matching ``names`` in priority order, None when absent."""
    for pattern in names:
        hits = _match_keys(flat, pattern)
        if hits:
            return hits[0], flat[hits[0]]
    return None


def normalize_config(flat: dict[str, Any], framework: str = "unknown") -> dict[str, Any]:
    """Canonical hyper-parameters (:data:`HPARAMS` keys) found in a flattened config.

    Keys that are absent stay absent (absent != None: ``max_grad_norm: None`` means "no
    clipping" and is kept as None).  Derived values: ``num_mini_batches`` from batch and
    minibatch sizes, ``adaptive_kl`` from controller settings, veRL's effective KL.
    """
    out: dict[str, Any] = {}
    for hp in HPARAMS:
        names = hp.by_framework.get(framework, hp.names)
        hit = lookup(flat, names)
        if hit is None:
            continue
        raw_key, raw_val = hit
        val = _CONVERT[hp.kind](raw_val)
        if val is None and parse_scalar(raw_val) is not None:
            continue  # present but not understood (e.g. a scheduler object): do not guess
        out[hp.key] = val
    _derive(out, flat, framework)
    return out


def _derive(out: dict[str, Any], flat: dict[str, Any], framework: str) -> None:
    if out.get("top_k") is not None and out["top_k"] < 0:
        out["top_k"] = 0  # vLLM/veRL use -1 for "no top-k"; HF uses 0
    if out.get("min_length") is not None and out["min_length"] < 0:
        out["min_length"] = -1  # TRL FAQ's recommended "off" value
    if "num_mini_batches" not in out and out.get("batch_size") and out.get("mini_batch_size"):
        out["num_mini_batches"] = max(1, round(out["batch_size"] / out["mini_batch_size"]))
    if "adaptive_kl" not in out:
        ctrl = lookup(flat, ("algorithm.kl_ctrl.type", "kl_ctrl.type"))
        kind = _as_str(ctrl[1]) if ctrl is not None else None
        if kind:
            out["adaptive_kl"] = kind.lower() == "adaptive"
        elif framework in ("openrlhf", "trlx") and "target_kl" in out:
            # OpenRLHF: --kl_target switches on the adaptive controller; trlx: method.target
            out["adaptive_kl"] = out["target_kl"] is not None
    if framework == "verl":
        _verl_kl(out, flat)
    if framework == "openrlhf" and "kl_estimator" not in out:
        k3 = lookup(flat, ("use_kl_estimator_k3",))
        if k3 is not None and _as_bool(k3[1]):
            out["kl_estimator"] = "k3"  # OpenRLHF 0.5.x flag (docs/sources.md#openrlhf-metrics)
    for key in ("kl_coef", "reward_clip"):
        if out.get(key) is not None and out[key] < 0:
            out.pop(key)  # negative coefficients/bounds are not meaningful; leave them out


def _verl_kl(out: dict[str, Any], flat: dict[str, Any]) -> None:
    """veRL has two KL mechanisms; record the one in use (docs/sources.md#verl-metrics)."""
    use_loss = lookup(flat, ("actor_rollout_ref.actor.use_kl_loss", "use_kl_loss"))
    in_reward = lookup(flat, ("algorithm.use_kl_in_reward", "use_kl_in_reward"))
    if use_loss is not None and _as_bool(use_loss[1]):
        coef = lookup(flat, ("actor_rollout_ref.actor.kl_loss_coef", "kl_loss_coef"))
        if coef is not None and _as_float(coef[1]) is not None:
            out["kl_coef"] = _as_float(coef[1])
        if out.get("kl_loss_estimator"):
            out["kl_estimator"] = out["kl_loss_estimator"]
    elif in_reward is not None and _as_bool(in_reward[1]) is False:
        out["kl_coef"] = 0.0  # neither KL loss nor KL-in-reward: no KL term at all
    else:
        coef = lookup(flat, ("algorithm.kl_ctrl.kl_coef", "kl_ctrl.kl_coef"))
        if coef is not None and _as_float(coef[1]) is not None:
            out["kl_coef"] = _as_float(coef[1])


def describe(key: str) -> str:
    """The one-line meaning of a canonical hyper-parameter."""
    return _BY_KEY[key].doc


__all__ = [
    "HPARAMS",
    "scalar_float",
    "HPARAM_KEYS",
    "HParam",
    "flatten_config",
    "normalize_config",
    "parse_scalar",
    "lookup",
    "describe",
]

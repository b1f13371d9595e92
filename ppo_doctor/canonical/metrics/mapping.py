"""Mapping raw tags onto canonical names (:func:`map_tags`): user aliases, then the
framework's alias table (:func:`table_for`), one raw tag per canonical metric, then the words
of a name (:mod:`ppo_doctor.canonical.name_tokens`); what each mapped number means
(:class:`~ppo_doctor.run.MetricInfo`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable

from ..frameworks import candidate_keys, flattened, logs_episodes
from ..name_tokens import AVERAGE_WORDS, REWARD_WORDS, TRAINING_WORDS, infer_canonical, words
from ...run import MetricInfo
from .aliases import ALIASES, Q_LEARNING, Q_MARKERS, SB3_DQN, SB3_DQN_MARKER, Alias
from .vocabulary import CANONICAL, NONNEGATIVE_ESTIMATORS

# A synonym tag with this many times the points of the preferred spelling is read instead.
DENSER_SYNONYM = 10


# What the LLM table reads as a critic, and what only an LLM loop logs besides a KL (a KL alone is
# the ambiguous name: to the reference in an LLM loop, to the old policy in a classic PPO).
_CRITIC = frozenset({"loss/value", "value/explained_var", "value/mean"})
_LLM_ONLY = frozenset({"kl/coef", "reward/kl_penalty"})


def table_for(framework: str, tags: Iterable[str] = ()) -> tuple[Alias, ...]:
    """The alias table used for a framework (``unknown`` picks the LLM or classic-RL spelling:
    classic for a log of episode returns, or of a critic with nothing only an LLM loop logs)."""
    tags = list(tags)
    if framework == "unknown":
        if not (logs_episodes(tags) or _critic_without_llm(tags)):
            return ALIASES["unknown"]
        return Q_LEARNING if any(m in tags for m in Q_MARKERS) else ALIASES["unknown_rl"]
    if framework == "sb3" and SB3_DQN_MARKER in tags:
        return SB3_DQN
    return ALIASES[framework]


def _critic_without_llm(tags: list[str]) -> bool:
    """The LLM table reads a critic among ``tags`` and nothing only an LLM loop logs (a response
    length, a KL coefficient or penalty).  GRPO-style LLM loops have no critic, and PPO-RLHF
    loops log their answers' lengths; a home-made actor-critic loop with a value loss and a
    ``kl_divergence`` is classic RL, whose KL is to the old policy (two Pokemon TCG PPO logs of
    the labelled set, read as LLM RL with a KL to a reference model)."""
    names: dict[str, str] = {}
    for a in ALIASES["unknown"]:
        if "*" not in a.raw:
            names.setdefault(a.raw, a.canonical)
            names.setdefault(flattened(a.raw), a.canonical)
    read: set[str] = set()
    for tag in tags:
        hit = next((names[k] for k in candidate_keys(tag) if k in names), None)
        guess = infer_canonical(tag) if hit is None else None
        read.add(hit if hit is not None else guess.canonical if guess is not None else tag)
    return bool(read & _CRITIC) and not read & _LLM_ONLY and not any(c.startswith("len/") for c in read)



@dataclass
class MappingResult:
    """What :func:`map_tags` decided: the canonical name of each mapped tag, what each mapped number
    means, and notes on the choices made."""

    mapping: dict[str, str]  # raw tag -> canonical
    info: dict[str, MetricInfo]  # canonical -> meaning
    notes: list[str]


def map_tags(
    tags: Iterable[str],
    framework: str,
    config: dict[str, Any] | None = None,
    aliases: dict[str, str] | None = None,
    counts: dict[str, int] | None = None,
    constant: frozenset[str] = frozenset(),
) -> MappingResult:
    """Map raw tags to canonical names: user aliases, then the table, one raw tag per name.

    A tag literally named like a canonical metric takes that name first; otherwise the
    table order decides (e.g. TRL legacy ``env/reward_mean`` before ``ppo/mean_scores``),
    then the tag order (the orchestrator lists the most precise format first).  With
    ``counts`` (points per tag), a candidate with ``DENSER_SYNONYM`` times the points of the
    preferred one takes the name instead.  A preferred tag in ``constant`` (it holds one exact
    value on every point: not measured) yields to a synonym that moves.
    """
    tags = list(dict.fromkeys(tags))
    cfg = config or {}
    mapping: dict[str, str] = {}
    info: dict[str, MetricInfo] = {}
    notes: list[str] = []
    claimed: set[str] = set()

    for raw, canonical in (aliases or {}).items():
        raw, canonical = str(raw), str(canonical)
        hits = [t for t in tags if raw in candidate_keys(t) and t not in mapping]
        if not hits:
            continue
        if canonical in claimed:
            notes.append(f"alias {raw!r} -> {canonical!r} ignored: {canonical!r} is already aliased")
            continue
        if canonical not in CANONICAL:
            notes.append(f"alias target {canonical!r} is not a canonical metric name; used as given")
        tag = hits[0]
        mapping[tag] = canonical
        claimed.add(canonical)
        info[canonical] = MetricInfo(canonical=canonical, raw_tag=tag, framework=framework, note="user alias")

    table = table_for(framework, tags)
    index: dict[str, tuple[int, Alias]] = {}
    patterns: list[tuple[int, Alias]] = []
    for i, a in enumerate(table):
        if "*" in a.raw:
            patterns.append((i, a))
        else:
            index.setdefault(a.raw, (i, a))
    for i, a in enumerate(table):  # the same names with their '/' flattened to '_', after them
        if "*" not in a.raw and "/" in a.raw:
            index.setdefault(flattened(a.raw), (i, a))
    for name in CANONICAL:  # identity: a tag already named canonically (lowest priority)
        if "*" not in name:
            index.setdefault(name, (len(table), Alias(name, name)))

    candidates: list[tuple[int, int, str, Alias]] = []
    for order, tag in enumerate(tags):
        if tag in mapping:
            continue
        for key in candidate_keys(tag):
            hit = index.get(key) or _pattern_hit(key, patterns)
            if hit is not None:
                prio, alias = hit
                candidates.append((-1 if key == alias.canonical else prio, order, tag, alias))
                break
    best: dict[str, tuple[int, int, str, Alias]] = {}
    for cand in sorted(candidates, key=lambda c: (c[0], c[1])):
        canonical, tag = cand[3].canonical, cand[2]
        if canonical in claimed:
            continue
        first = best.get(canonical)
        if first is None:
            best[canonical] = cand
        elif counts and counts.get(tag, 0) >= DENSER_SYNONYM * max(counts.get(first[2], 0), 1):
            # a synonym with many times the points wins: the preferred spelling came from a
            # truncated or down-sampled copy (a baselines progress.csv of 2 rows beside the
            # run's TensorBoard file)
            notes.append(f"{tag!r} ({counts[tag]} points) read as {canonical!r} instead of {first[2]!r} ({counts.get(first[2], 0)} points)")
            best[canonical] = cand
        elif first[2] in constant and tag not in constant:
            # a placeholder is not a measurement: ML-Agents' MA-POCA writes the agents' own
            # ``Environment/Cumulative Reward`` as 0 on every summary when the environment pays
            # only group rewards (``AddGroupReward``), and the group's return is what it learns
            notes.append(f"{first[2]!r} holds one value on every point: {tag!r} read as {canonical!r} instead")
            best[canonical] = cand
    for canonical, (_prio, _order, tag, alias) in best.items():
        mapping[tag] = canonical
        info[canonical] = _metric_info(alias, tag, framework, cfg)
    for tag in sorted((t for t in tags if t not in mapping), key=_qualifiers):
        guess = infer_canonical(tag)
        if guess is not None and guess.canonical not in info:
            mapping[tag] = guess.canonical
            info[guess.canonical] = MetricInfo(
                canonical=guess.canonical, raw_tag=tag, framework=framework, sign=guess.sign, note=guess.note, inferred=True
            )
    _infer_reference_kl(tags, mapping, info, framework)
    _success_as_reward(tags, mapping, info, framework)
    return MappingResult(mapping, info, notes)


def _qualifiers(tag: str) -> int:
    """How many words of a reward name say which part of the reward it is (``answer`` in
    ``mean_answer_reward``, ``grasp`` in garage's ``Evaluation/EpisodeMeanGraspReward``), 0 for
    any other name: the inference reads the least qualified reward name first, the total beside
    its components (``mean_reward``, ``Evaluation/AverageReturn``), whatever the column order.
    Words are counted in the last part of the name when it names the reward (a namespace such as
    RLlib's ``ray/tune/`` qualifies nothing)."""
    w = set(words(tag))
    if not w & REWARD_WORDS:
        return 0
    last = set(words(tag.rsplit("/", 1)[-1]))
    return len((last if last & REWARD_WORDS else w) - REWARD_WORDS - AVERAGE_WORDS - TRAINING_WORDS - {"total"})


# A training success rate's names (baselines HER's ``train/success_rate``, a win rate).
_SUCCESS_NAMES = ({"success", "rate"}, {"train", "success", "rate"}, {"success"}, {"win", "rate"}, {"train", "win", "rate"})
# Names a home-made loop gives its KL term (rasbt's GRPO ``kl_loss``, a bare ``kl``).
_KL_NAMES = ({"kl"}, {"kl", "loss"}, {"kl", "penalty"}, {"kl", "div"}, {"kl", "divergence"})


def _success_as_reward(tags: list[str], mapping: dict[str, str], info: dict[str, MetricInfo], framework: str) -> None:
    """A log with no reward but a training success rate (goal-conditioned RL: baselines HER logs
    ``train/success_rate`` and no return) is judged on that rate: it is what the policy is
    trained to raise."""
    if "reward/score" not in info and "reward/total" not in info:
        note = "no reward is logged: the training success rate stands for it"
        _infer_first(tags, mapping, info, MetricInfo("reward/score", "", framework, note=note, inferred=True), _SUCCESS_NAMES)


def _infer_reference_kl(tags: list[str], mapping: dict[str, str], info: dict[str, MetricInfo], framework: str) -> None:
    """A home-made loop's KL term is to the reference model once its names show it samples
    answers (a response length was read): an LLM loop's KL penalty or KL loss is to the frozen
    reference (veRL's ``actor/kl_loss``, GRPO's ``beta * KL``), while a classic-RL PPO's KL
    penalty is to the old policy, so without that sign the name is left alone."""
    if "len/response_mean" in info and "kl/ref" not in info:
        note = "a KL term in a loop that samples answers: read as the KL to the reference model"
        _infer_first(tags, mapping, info, MetricInfo("kl/ref", "", framework, between="ref", note=note, inferred=True), _KL_NAMES)


def _infer_first(tags: list[str], mapping: dict[str, str], info: dict[str, MetricInfo], meaning: MetricInfo, names: tuple[set[str], ...]) -> None:
    """Map the first unmapped tag whose words are one of ``names`` to ``meaning``'s canonical name."""
    for tag in tags:
        if tag not in mapping and set(words(tag)) in names:
            mapping[tag] = meaning.canonical
            info[meaning.canonical] = replace(meaning, raw_tag=tag)
            return


def _pattern_hit(key: str, patterns: list[tuple[int, Alias]]) -> tuple[int, Alias] | None:
    """A ``*`` alias (one path segment, e.g. ``rewards/*/mean``) matching ``key``, made concrete."""
    parts = key.split("/")
    for prio, a in patterns:
        pat = a.raw.split("/")
        if len(pat) != len(parts):
            continue
        seg = [p for p, q in zip(parts, pat) if q == "*"]
        if all(q == "*" or p == q for p, q in zip(parts, pat)) and all(seg):
            return prio, a._replace(raw=key, canonical=a.canonical.replace("*", seg[0]))
    return None


def _metric_info(alias: Alias, tag: str, framework: str, config: dict[str, Any]) -> MetricInfo:
    estimator = alias.estimator
    note = alias.note
    if alias.estimator_hparam and config.get(alias.estimator_hparam):
        chosen = config[alias.estimator_hparam]
        if chosen != estimator:
            note = f"{note}; estimator {chosen} from config {alias.estimator_hparam}" if note else f"estimator {chosen} from config"
        estimator = chosen
    return MetricInfo(
        canonical=alias.canonical,
        raw_tag=tag,
        framework=framework,
        estimator=estimator,
        reduction=alias.reduction,
        sign=alias.sign,
        between=alias.between,
        note=note,
    )


def can_be_negative(info: MetricInfo | None) -> bool | None:
    """Whether the logged KL may legitimately be < 0 (None when the estimator is unknown)."""
    if info is None or info.estimator is None:
        return None
    return info.estimator not in NONNEGATIVE_ESTIMATORS


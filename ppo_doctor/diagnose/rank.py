"""Rank causes from findings (symptom evidence) and the run's config (context evidence).

Score of a cause = finding support x config factor:

* finding support: every finding lends ``weight x severity`` to each cause it names
  (``Finding.causes``; the symptom's default causes when a rule names none).  Within one
  symptom and one kind of observation the contributions are taken in decreasing order with
  halving weights (1, 1/2, 1/4, ...), so ten findings of the same symptom do not outvote two
  independent symptoms; distinct symptoms add up.  The generated text samples (PD95x,
  ``Finding.observes == "texts"``) are a kind of observation of their own, independent of the logged
  scalars: the guides tell people to read the samples precisely because they show what the
  metrics cannot (repeated phrases, '!' spam: the reward model being exploited).
* config factor: ``exp(sum of evidence weights)`` from :mod:`.evidence`, clipped to
  [exp(-1.5), exp(1.5)].  It multiplies, so configuration alone never creates a cause.

Confidence = ``(1 - exp(-1.2 x score)) x score / best score``: the top cause's confidence
grows with its absolute support (one error-level finding with full weight gives 0.70, plus
supporting config > 0.85) and the others are scaled by how far they trail it.

Causes, titles and fixes fit the kind of run (:mod:`.domains`): a classic-RL run is diagnosed
with classic-RL causes only, and its fixes name its framework's arguments; a GRPO run's reward
comes from reward functions.  A cause ranked first although its config evidence weighs against it on
balance says why (its findings' support against the next cause's), so that a reader is not left
with a first cause whose own evidence contradicts it.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict

from ..results import Finding, RankedCause
from ..run import Run
from ..view import RunView
from .catalog import CAUSE_IDS, LLM_DOMAINS, Cause, causes_in_domain, get_cause
from .domains import cause_domain, classic_flavour, render_classic
from .evidence import Evidence, collect, knob_value

log = logging.getLogger(__name__)

SEVERITY_FACTOR = {"info": 0.35, "warning": 0.75, "error": 1.0}
SAME_SYMPTOM_DECAY = 0.5
MAX_LOG_FACTOR = 1.5
STRENGTH_RATE = 1.2
_ORDER = {cid: i for i, cid in enumerate(CAUSE_IDS)}


def finding_causes(f: Finding, domain: str = "unknown") -> dict[str, float]:
    """The causes a finding supports in a run of ``domain``: its own, else its symptom's
    defaults, those that can be causes there (:func:`.catalog.causes_in_domain`)."""
    return causes_in_domain(f.causes, f.symptom, domain)


def _describe(f: Finding) -> str:
    """A finding named by its rule, symptom, metric and steps; its message is shown once, with
    the finding itself, not again under every cause it supports."""
    where = ""
    if f.start_step is not None:
        where = f" from step {f.start_step}" + (f" to {f.end_step}" if f.end_step not in (None, f.start_step) else "")
    return f"{f.code} {f.name} ({f.severity}, {f.symptom} on {f.metric or 'the run'}{where})"


def _range_applies(where: str, domain: str) -> bool:
    return where == "any" or where == domain or (where == "llm" and domain in LLM_DOMAINS)


def applicable_fixes(cause: Cause, run: Run, domain: str = "unknown") -> tuple[list[str], list[str]]:
    """``(fixes, notes)``: the cause's fixes minus those that would move a knob into a range the
    run already sits in (``Cause.fix_ranges`` for a run of ``domain``), with a note for each one
    dropped."""
    dropped: dict[int, str] = {}
    for idx, knob, direction, lo, hi, where in cause.fix_ranges:
        if not _range_applies(where, domain):
            continue
        value = knob_value(run, knob)
        if value is None or not math.isfinite(value):
            continue
        if knob == "max_grad_norm" and value <= 0:
            continue  # 0 or less means clipping is off (common.clipping_off): the fix applies
        if (direction == "raise" and value >= lo) or (direction == "lower" and value <= hi):
            span = f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"
            dropped[idx] = f"{knob} = {value:g} already sits {'at' if lo == hi else 'in'} or beyond the {span} a fix would set"
    fixes = [fx for i, fx in enumerate(cause.fixes) if i not in dropped]
    return fixes, list(dropped.values())


def _group(f: Finding) -> tuple[str, str]:
    """Findings in one group share diminishing returns: same symptom, same kind of observation."""
    return f.symptom, f.observes


def _support(
    findings: list[Finding], domain: str
) -> tuple[dict[str, float], dict[str, list[tuple[float, str]]], dict[str, list[str]]]:
    """Per cause: its support, the findings' evidence texts, and the codes of the findings that
    support it in ``domain`` (``RankedCause.supported_by``), in the findings' order."""
    per: dict[str, dict[tuple[str, str], list[tuple[float, str]]]] = defaultdict(lambda: defaultdict(list))
    codes: dict[str, list[str]] = defaultdict(list)
    for f in findings:
        sev = SEVERITY_FACTOR.get(f.severity, 0.5)
        for cid, w in finding_causes(f, domain).items():
            if cid not in _ORDER:
                log.warning("finding %s names unknown cause %r; ignored", f.code, cid)
                continue
            if w > 0:
                per[cid][_group(f)].append((float(w) * sev, _describe(f)))
                codes[cid].append(f.code)
    support: dict[str, float] = {}
    evidence: dict[str, list[tuple[float, str]]] = {}
    for cid, by_group in per.items():
        total = 0.0
        items: list[tuple[float, str]] = []
        for contribs in by_group.values():
            contribs.sort(key=lambda c: (-c[0], c[1]))
            total += sum(c * SAME_SYMPTOM_DECAY**i for i, (c, _) in enumerate(contribs))
            items.extend(contribs)
        support[cid] = total
        evidence[cid] = sorted(items, key=lambda c: (-c[0], c[1]))
    return support, evidence, codes


def _factor(ev: list[Evidence]) -> float:
    s = sum(e.weight for e in ev)
    return math.exp(max(-MAX_LOG_FACTOR, min(MAX_LOG_FACTOR, s)))


def _first_despite(ranked: list[RankedCause], support: dict[str, float], config_ev: dict[str, list[Evidence]]) -> None:
    """When the first cause's config evidence is against it on balance, say why it still leads:
    the findings back it more than the next cause (whose support and config are named)."""
    if not ranked:
        return
    top = ranked[0]
    if sum(e.weight for e in config_ev.get(top.id, [])) >= 0:
        return
    if len(ranked) == 1:
        why = "no other cause is named by the findings"
    else:
        nxt = ranked[1]
        why = (
            f"the findings back it with support {support[top.id]:.2g}, the next cause ({nxt.id}) with "
            f"{support[nxt.id]:.2g}"
        )
    top.evidence.insert(0, f"first although its config evidence weighs against it on balance: {why}")


def rank_causes(findings: list[Finding], run: Run) -> list[RankedCause]:
    """Every cause supported by at least one finding, most likely first (ties by catalog order)."""
    view = RunView(run)
    domain = cause_domain(view)
    support, finding_ev, supporters = _support(findings, domain)
    if not support:
        return []
    flavour = classic_flavour(view) if domain == "classic" else None
    config_ev = collect(run, list(support))
    scores = {cid: s * _factor(config_ev.get(cid, [])) for cid, s in support.items()}
    best = max(scores.values())
    ranked = []
    for cid, score in scores.items():
        found = get_cause(cid)
        assert found is not None  # _support keeps catalog ids only
        cause = found.in_domain(domain)
        fixes, fix_notes = applicable_fixes(cause, run, domain)
        if domain == "classic":
            fixes = [render_classic(fx, flavour) for fx in fixes]
        ev = sorted(config_ev.get(cid, []), key=lambda e: -e.weight)
        conf = (1.0 - math.exp(-STRENGTH_RATE * score)) * (score / best if best > 0 else 0.0)
        ranked.append(
            (
                -round(conf, 9),
                -support[cid],
                _ORDER[cid],
                RankedCause(
                    id=cid,
                    title=cause.title,
                    confidence=conf,
                    explanation=cause.explanation,
                    evidence=[text for _, text in finding_ev[cid]],
                    supported_by=supporters[cid],
                    config_evidence=[e.text for e in ev if e.weight >= 0],
                    config_against=[e.text for e in ev if e.weight < 0] + fix_notes,
                    fixes=fixes,
                ),
            )
        )
    ranked.sort(key=lambda r: r[:3])
    out = [r[3] for r in ranked]
    _first_despite(out, support, config_ev)
    return out


__all__ = ["rank_causes", "finding_causes", "SEVERITY_FACTOR"]

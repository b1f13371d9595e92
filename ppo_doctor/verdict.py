"""The verdict of a run: healthy, unhealthy or unknown, and its reason, from the findings.

One contract for every output (the JSON schema's ``verdict`` and ``verdict_reason``; the
terminal, Markdown, HTML, SARIF and JUnit reports show what this module decides): a run is
unhealthy when a warning- or error-level finding names a training symptom, unknown when its log
cannot support a judgement, healthy otherwise, and a run short of its plan says where it stands.
It reads findings and the run, never the rules that made them, so renderers use it without the
rule engine.
"""

from __future__ import annotations

from .results import SEVERITY_RANK, SYMPTOMS, Finding, NotApplicable
from .canonical.task_metrics import is_task_metric
from .run import Run

# Symptoms about the run's dynamics (everything but log quality).  One warning- or error-level
# finding with one of them makes a run unhealthy (docs/architecture.md#contracts): a warning is a
# claim the rule defends to the run's author, and severity says how bad it is.
CORE_SYMPTOMS = tuple(s for s in SYMPTOMS if s != "log_quality")
# The fewest points the longest core metric needs before a run is judged at all: the trend and
# stability rules need this much history (PD905 short-run uses the same figure), so a 2-step or
# 4-row log is "unknown", not "healthy".
MIN_POINTS_FOR_VERDICT = 20
CORE_METRICS = ("reward/score", "reward/total", "kl/ref", "kl/old", "loss/policy", "loss/value", "loss/total")

# The metric families a verdict needs at least one of (docs/architecture.md#contracts: unknown when the
# run lacks the metrics to judge, e.g. SFT control runs or logs of timings only).  Only the RL
# losses count: a bare ``loss`` (HF Trainer) maps to ``loss/total`` and is an SFT run's loss too.
JUDGING_FAMILIES = {
    "reward": ("reward/score", "reward/total"),
    "KL": ("kl/ref", "kl/old"),
    "policy/value loss": ("loss/policy", "loss/value"),
}
LOSS_FAMILY = "policy/value loss"


def _missing_families(run: Run) -> list[str]:
    return [fam for fam, metrics in JUDGING_FAMILIES.items() if not any(run.frame.has(m) for m in metrics)]


def _logs_task(run: Run) -> bool:
    """The run measures its task (an accuracy, a success or pass rate: ``canonical.task_metrics.is_task_metric``,
    or an evaluation reward): with no reward, KL or RL loss, that is what a verdict rests on (an
    on-policy distillation loop logging its correct rate, a preference optimisation its batch
    accuracy; PD212 judges it)."""
    if run.eval_frame is not None and any(run.eval_frame.has(m) for m in JUDGING_FAMILIES["reward"]):
        return True
    frames = [f for f in (run.frame, run.eval_frame) if f is not None]
    return any(is_task_metric(m) for f in frames for m in f.metrics)


def core_points(run: Run) -> int:
    """Points in the run's longest core metric (reward, KL, losses); in a run that logs none of
    them but measures its task (:func:`_logs_task`), in its longest task series, the one PD212
    judges (a Wordle loop's per-game solve rate over 500 games, no reward named)."""
    core = max((run.frame.count(m) for m in CORE_METRICS if run.frame.has(m)), default=0)
    if core or len(_missing_families(run)) < len(JUDGING_FAMILIES):
        return core
    frames = [f for f in (run.frame, run.eval_frame) if f is not None]
    return max((f.count(m) for f in frames for m in f.metrics if is_task_metric(m)), default=0)


def decisive(findings: list[Finding]) -> list[Finding]:
    """The findings that decide a verdict (warning or error on a training symptom), worst first,
    then in step order."""
    out = [f for f in findings if f.severity != "info" and f.symptom in CORE_SYMPTOMS]
    return sorted(out, key=lambda f: (-SEVERITY_RANK[f.severity], f.start_step if f.start_step is not None else -1, f.code))


def _at(f: Finding) -> str:
    return f"{f.symptom}" + (f" from step {f.start_step}" if f.start_step is not None else "")


def unhealthy_reason(findings: list[Finding], *, with_message: bool = True) -> str:
    """The reason of an unhealthy verdict: the deciding finding (errors first, then the earliest
    onset) and the other symptoms in step order; "" when no finding decides.

    ``with_message=False`` leaves the deciding finding's message out, for the reports that list
    every finding under the verdict (a finding's message is shown once per run).
    """
    bad = decisive(findings)
    if not bad:
        return ""
    worst = bad[0]
    reason = f"{_at(worst)} ({worst.code} {worst.name}, {worst.severity})"
    if with_message:
        reason += f": {worst.message}"
    others: list[Finding] = []
    for f in sorted(bad[1:], key=lambda f: (f.start_step if f.start_step is not None else -1, f.code)):
        if f.symptom != worst.symptom and f.symptom not in {o.symptom for o in others}:
            others.append(f)
    if others:
        reason += "; also " + ", ".join(_at(f) for f in others)
    return reason


def verdict_for(run: Run, findings: list[Finding], not_applicable: list[NotApplicable]) -> tuple[str, str]:
    """``(verdict, reason)`` (:func:`_verdict`), the reason saying where a run stands when it
    stopped short of its plan or is still being written: "partial run: 40 of 200 planned steps
    (20 %)" (on a live run an absence of progress is judged only on a fair share of the plan; an
    offline log is judged where it stopped, :mod:`ppo_doctor.standing`)."""
    verdict, reason = _verdict(run, findings, not_applicable)
    stand = run.standing
    if stand.partial:
        if not stand.live:
            pending = ", judged where it stopped (`ppo-doctor watch` follows a run still training)"
        elif verdict == "unhealthy":
            pending = ""  # beside a symptom the run already shows, the plan left is no reason to wait
        else:
            pending = ", an absence of progress is judged once it reaches its plan"
        reason += f"; partial run: {stand.describe()}{pending}"
    elif stand.live and stand.planned is None and stand.done is not None:
        reason += f"; live: {stand.describe()}"
    return verdict, reason


def _verdict(run: Run, findings: list[Finding], not_applicable: list[NotApplicable]) -> tuple[str, str]:
    """``(verdict, reason)``, the one contract of every output (docs/architecture.md#contracts).

    * unhealthy: at least one warning- or error-level finding on a training symptom; the
      reason is the worst one's message (errors first, then the earliest onset), and names the
      other symptoms in step order;
    * unknown: the log cannot support a judgement: no reward, no KL and no policy/value loss
      metric, or fewer than :data:`MIN_POINTS_FOR_VERDICT` points in its longest core metric
      (an error-level finding, e.g. NaN in the reward, still makes a short run unhealthy);
    * healthy otherwise; the reason names the metric families that were not logged (a run
      without any KL metric is healthy on what it logs, never "healthy on KL"), and says what
      the run lacks by design: a critic-free run (``Run.by_design``) has no value metrics to
      log and its total loss is its policy loss, so it is never "not judged: no policy/value
      loss metric" when it logs ``loss``.

    ``log_quality`` findings and info notes never decide a verdict.
    """
    bad = decisive(findings)
    missing = _missing_families(run)
    points = core_points(run)
    critic_free = run.by_design.get("critic", "")
    if not bad:
        if len(missing) == len(JUDGING_FAMILIES) and not _logs_task(run):
            if critic_free:
                return "unknown", (
                    "cannot judge: the run logs no reward and no KL metric"
                    + (", only its total loss" if run.frame.has("loss/total") else " and no loss")
                    + f"; {critic_free}"
                )
            return "unknown", "cannot judge: the run logs no reward, no KL and no policy/value loss metric (an SFT or non-RL log?)"
        if points < MIN_POINTS_FOR_VERDICT:
            return "unknown", (
                f"cannot judge: only {points} point(s) in the longest reward/KL/loss metric; "
                f"a judgement needs at least {MIN_POINTS_FOR_VERDICT}"
            )
    if bad:
        return "unhealthy", unhealthy_reason(bad)
    reason = "no warning- or error-level finding on a training symptom"
    if critic_free:
        # a critic-free trainer (GRPO, RLOO, ...) has no value loss to log, and its total loss
        # (TRL's ``loss``) is the policy loss: neither is a gap in the log
        reason += f"; {critic_free}: no value metrics by design"
        missing = [
            "policy loss" if fam == LOSS_FAMILY else fam
            for fam in missing
            if fam != LOSS_FAMILY or not run.frame.has("loss/total")
        ]
    off = [fam for fam in missing if fam == "KL" and run.kl_off]
    if off:
        # the head of the by-design reason: "KL off by configuration", or "no KL series by design"
        # for an offline preference trainer, whose reference model is inside its loss
        reason += "; " + run.by_design["kl"].split(" (")[0]
    missing = [fam for fam in missing if fam not in off]
    if missing:
        reason += f"; not judged: no {' / '.join(missing)} metric logged"
        if "reward" in missing and _logs_task(run):
            reason += " (progress judged on the task metric it logs)"
    return "healthy", reason

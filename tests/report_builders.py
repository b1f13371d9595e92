"""Hand-built Runs and Reports for the report, plot, compare and CLI tests.

Reports are assembled directly from the contracts (RunFrame.from_series + RawSeries,
Finding, RankedCause, NotApplicable), so the renderers are tested independently of the
rules and readers that other modules provide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ppo_doctor.results import Finding, NotApplicable, RankedCause, Report, RunReport
from ppo_doctor.frame import RawSeries, ReadIssue, RunFrame, TextSample
from ppo_doctor.run import Run
from ppo_doctor.verdict import verdict_for

XSS = "<script>alert(1)</script>"
N = 200


def make_run(
    run_id: str,
    series: dict[str, Any],
    *,
    path: str | None = None,
    files: list[str] | None = None,
    config: dict[str, Any] | None = None,
    texts: list[TextSample] | None = None,
    mapping: dict[str, str] | None = None,
) -> Run:
    """A Run whose metrics are ``series`` (metric -> values over steps 0..n-1)."""
    path = path or f"logs/{run_id}"
    files = files if files is not None else [f"{path}/events.out.tfevents.1"]
    items = []
    for metric, values in series.items():
        values = np.asarray(values, dtype=float)
        items.append((metric, RawSeries(tag=metric, steps=np.arange(len(values)), values=values, source=files[0] if files else "")))
    return Run(
        id=run_id,
        path=path,
        format="tensorboard",
        frame=RunFrame.from_series(items),
        files=files,
        framework="trl",
        config=config or {},
        mapping=mapping or {m: m for m in series},
        texts=texts or [],
    )


def kl_blowup_series(n: int = N, onset: int = 120) -> dict[str, np.ndarray]:
    """A run whose KL runs away from ``onset`` and whose value loss goes NaN near the end."""
    rng = np.random.default_rng(0)
    steps = np.arange(n)
    kl = 0.05 + 0.01 * rng.standard_normal(n)
    kl[onset:] += np.exp((steps[onset:] - onset) / 12.0) * 0.05
    reward = 0.5 + 0.002 * steps + 0.05 * rng.standard_normal(n)
    reward[onset:] += 0.03 * (steps[onset:] - onset)
    value_loss = 0.3 + 0.05 * rng.standard_normal(n)
    value_loss[-10:] = np.nan
    value_loss[-3] = np.inf
    return {
        "reward/score": reward,
        "kl/ref": kl,
        "kl/coef": np.full(n, 0.001),
        "loss/value": value_loss,
        "loss/policy": 0.01 * rng.standard_normal(n),
        "policy/entropy": 2.0 - 0.004 * steps,
        "grad/norm": np.abs(1.0 + 0.2 * rng.standard_normal(n)) * np.where(steps > onset, 50.0, 1.0),
        "len/response_mean": 40 + 0.1 * steps,
    }


def healthy_series(n: int = N) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    steps = np.arange(n)
    return {
        "reward/score": 0.5 + 0.003 * steps + 0.05 * rng.standard_normal(n),
        "kl/ref": 0.02 + 0.0005 * steps + 0.005 * rng.standard_normal(n),
        "kl/coef": np.full(n, 0.05),
        "loss/value": 0.3 * np.exp(-steps / 80) + 0.05,
        "policy/entropy": 2.0 - 0.001 * steps,
        "grad/norm": np.abs(1.0 + 0.1 * rng.standard_normal(n)),
    }


def kl_finding(start: int = 120, end: int = N - 1, severity: str = "error") -> Finding:
    return Finding(
        code="PD101",
        name="kl-above-band",
        symptom="kl_blowup",
        severity=severity,
        metric="kl/ref",
        message=f"KL to the reference rose from 0.05 to 40 after step {start}",
        start_step=start,
        end_step=end,
        peak_step=end,
        observed={"peak": 40.0, "baseline": 0.05},
    )


def nan_finding(start: int = N - 10) -> Finding:
    return Finding(
        code="PD601",
        name="non-finite-values",
        symptom="nan",
        severity="error",
        metric="loss/value",
        message="loss/value is NaN or Inf from step 190",
        start_step=start,
        end_step=N - 1,
        observed={"first": float("nan"), "count": 10.0, "worst": float("inf")},
    )


def warning_finding() -> Finding:
    return Finding(
        code="PD602",
        name="gradient-explosion",
        symptom="gradient_explosion",
        severity="warning",
        metric="grad/norm",
        message="gradient norm jumped x50 at step 121",
        start_step=121,
        end_step=150,
        peak_step=130,
    )


def kl_cause() -> RankedCause:
    return RankedCause(
        id="kl-coef-too-low",
        title="KL coefficient too low",
        confidence=0.82,
        explanation="The KL penalty is too weak to hold the policy near the reference.",
        evidence=["PD101 kl-above-band from step 120"],
        config_evidence=["kl/coef = 0.001 (below 0.01)"],
        fixes=["Raise the KL coefficient (init_kl_coef / beta) to 0.05-0.2", "Use an adaptive KL controller with a target"],
    )


def lr_cause() -> RankedCause:
    return RankedCause(
        id="lr-too-high",
        title="Learning rate too high",
        confidence=0.41,
        evidence=["PD602 gradient-explosion at step 121"],
        fixes=["Lower the learning rate by 3-10x"],
    )


def unhealthy_report(tmp: Path | None = None) -> RunReport:
    path = str(tmp / "kl_blowup") if tmp else "logs/kl_blowup"
    run = make_run("kl_blowup", kl_blowup_series(), path=path, config={"init_kl_coef": 0.001, "learning_rate": 1.41e-5})
    findings = [kl_finding(), nan_finding(), warning_finding()]
    verdict, reason = verdict_for(run, findings, [])
    return RunReport(
        run=run,
        verdict=verdict,
        verdict_reason=reason,
        findings=findings,
        causes=[kl_cause(), lr_cause()],
        not_applicable=[NotApplicable(code="PD403", name="explained-variance-negative", missing=["value/explained_var"])],
    )


def healthy_report() -> RunReport:
    return RunReport(run=make_run("healthy", healthy_series()), verdict="healthy")


def unknown_report() -> RunReport:
    run = make_run("only-loss", {"loss/total": np.linspace(1, 0.5, 50)})
    return RunReport(
        run=run,
        verdict="unknown",
        verdict_reason="the run logs no reward or KL",
        not_applicable=[NotApplicable(code="PD101", name="kl-above-band", missing=["kl/ref"])],
    )


def sample_report() -> Report:
    """Three runs (unhealthy, healthy, unknown) and one unreadable file."""
    return Report(
        runs=[unhealthy_report(), healthy_report(), unknown_report()],
        errors=[ReadIssue(path="logs/broken/events.out.tfevents.2", message="truncated record", offset=4096)],
    )


def hostile_report() -> Report:
    """Log-derived text everywhere carries markup, ANSI escapes and table breakers."""
    tag = f"reward/{XSS}"
    run = make_run(
        f"run-{XSS}|`x`",
        {tag: np.linspace(0, 1, 30), "kl/ref": np.linspace(0.01, 0.02, 30)},
        path=f"logs/{XSS}",
        config={"note": XSS, "evil\x1b[31m": "red\x1b[0m|pipe"},
        texts=[TextSample(step=10, tag="samples", text=f"answer {XSS}\n```\ninjected", prompt="Q: <b>hi</b>", reward=1.5)],
    )
    finding = Finding(
        code="PD201",
        name="reward-spike",
        symptom="reward_spike",
        severity="error",
        metric=tag,
        message=f"{tag} spiked \x1b[2J\x1b]0;title\x07 at step 20\n::error::injected",
        start_step=20,
        end_step=25,
    )
    cause = RankedCause(id="reward-model-flawed", title=f"Reward model {XSS}", confidence=0.5, evidence=[XSS], fixes=[XSS])
    rr = RunReport(run=run, verdict="unhealthy", findings=[finding], causes=[cause])
    return Report(runs=[rr], errors=[ReadIssue(path=f"logs/{XSS}.jsonl", message=f"bad line {XSS}", offset=7)])

"""Scorecard of the hand-labelled real runs (issue 25).

    python -m benchmarks.real_scorecard [--labels FILE] [--shared DIR]

``tests/data/real_labels.json`` holds runs from ``../shared`` (``corpus``, ``realruns/real2``,
``realruns/real3``: logs other people wrote, read in place and never copied) labelled by hand from
their curves and repositories: a ``verdict`` (healthy / unhealthy / unknown), the symptoms a right
answer ``must`` name and those it must ``never`` name.  Each labelled folder is analysed with the
default settings (no config file) and its runs are matched by ``runs[].run`` of the JSON report,
the run's id relative to that folder.

A run is *right* when the verdict equals the label, every ``must`` symptom is present and no
``never`` symptom is, symptoms counted from severity ``warning`` up as
:meth:`ppo_doctor.results.RunReport.symptoms_at_or_above` counts them.  A *false alarm* is any such
training symptom on a run labelled healthy (log-quality warnings are about the log, never decide a
verdict, and are counted apart).

``--loro`` scores leave-one-repository-out: each repository's runs are analysed with the
population limits (:mod:`benchmarks.population`) measured without that repository's runs, so no
threshold a run is judged by was chosen with it; without it the shipped limits are used (the
*seen* figure).  Per symptom, a detection is a true positive on a run whose
``must`` names it, a false positive on a run whose ``never`` names it or that is labelled healthy,
and counts neither way elsewhere (a side effect the label neither requires nor forbids), as the
scenario scorecard counts allowed side effects (``docs/scorecard.md``).

``main`` prints the card as markdown; ``tests/test_real_regression.py`` holds the code to the
figures recorded in the labels file (``min_right`` and ``min_right_held_out``, one per set:
``corpus``, ``realruns/real2`` ...) and to its ``known_misses``.  A set absent from the copy of
``../shared`` at hand is not scored and its figure not required: the blind sets a session fetched
(``realruns/real5`` on) live beside that session's checkout, not in every copy.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"  # the real logs beside the checkout, as the tests find them
LABELS = ROOT / "tests" / "data" / "real_labels.json"
VERDICTS = ("healthy", "unhealthy", "unknown")
FLOOR = "warning"  # symptoms count from this severity up

log = logging.getLogger("real_scorecard")

__all__ = [
    "LABELS",
    "SHARED",
    "Card",
    "KnownMiss",
    "Label",
    "Outcome",
    "floor",
    "load_labels",
    "main",
    "present",
    "render",
    "score",
    "score_labels",
    "validate",
]


@dataclass(frozen=True)
class Label:
    """One hand-labelled run: ``folder`` under shared/, ``run`` the report's run id in it."""

    folder: str
    run: str
    verdict: str
    must: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    why: str = ""
    repository: str = ""
    framework: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.folder, self.run)

    @property
    def set(self) -> str:
        """The set of ../shared the run belongs to: ``corpus`` or ``realruns/<set>``."""
        parts = self.folder.split("/")
        return "/".join(parts[:2]) if parts[0] == "realruns" else parts[0]


def present(labels: Iterable[Label], shared: Path = SHARED) -> tuple[list[Label], list[str]]:
    """The labels whose set is under ``shared``, and the sets that are absent.  A copy of
    ../shared may hold fewer sets than were labelled (runs a session fetched for a blind test
    live beside its own checkout); a set that is absent is not scored, and a run missing from a
    set that is present is a miss."""
    here, absent = [], set()
    for lab in labels:
        (here.append(lab) if (shared / lab.set).is_dir() else absent.add(lab.set))
    return here, sorted(absent)


def floor(figures: Mapping[str, int], sets: Iterable[str]) -> int:
    """The recorded figure of the ``sets`` scored (``min_right`` per set in the labels file)."""
    return sum(figures.get(s, 0) for s in set(sets))


@dataclass(frozen=True)
class KnownMiss:
    """A false alarm on a healthy-labelled run that the code is known to raise, with its mechanism."""

    folder: str
    run: str
    symptoms: tuple[str, ...]
    mechanism: str


@dataclass(frozen=True)
class Outcome:
    """What the report said about one labelled run (``found`` False: no run with that id)."""

    label: Label
    verdict: str | None
    symptoms: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()  # rule codes of the warning-and-up findings, for the wrong-runs list

    @property
    def found(self) -> bool:
        return self.verdict is not None

    @property
    def missed(self) -> list[str]:
        return [s for s in self.label.must if s not in self.symptoms]

    @property
    def forbidden(self) -> list[str]:
        return [s for s in self.label.never if s in self.symptoms]

    @property
    def false_alarms(self) -> list[str]:
        """Every training symptom on a run labelled healthy (a log-quality warning is about the
        log, never decides a verdict, and is counted apart: :attr:`log_warnings`)."""
        return [s for s in self.symptoms if s != "log_quality"] if self.label.verdict == "healthy" else []

    @property
    def log_warnings(self) -> bool:
        return "log_quality" in self.symptoms

    @property
    def right(self) -> bool:
        return self.verdict == self.label.verdict and not self.missed and not self.forbidden

    def what_was_wrong(self) -> str:
        if not self.found:
            return "run not found in the report"
        parts = []
        if self.verdict != self.label.verdict:
            parts.append(f"verdict {self.verdict}, labelled {self.label.verdict}")
        if self.missed:
            parts.append("missed " + ", ".join(self.missed))
        if self.forbidden:
            parts.append("false " + ", ".join(self.forbidden))
        return "; ".join(parts)


@dataclass
class Card:
    """The scored set."""

    outcomes: list[Outcome]
    known_misses: list[KnownMiss] = field(default_factory=list)
    seconds: float = 0.0
    absent_sets: list[str] = field(default_factory=list)

    @property
    def sets(self) -> list[str]:
        return sorted({o.label.set for o in self.outcomes})

    def right_per_set(self) -> dict[str, int]:
        return {s: sum(o.right for o in self.outcomes if o.label.set == s) for s in self.sets}

    @property
    def right(self) -> int:
        return sum(o.right for o in self.outcomes)

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def wrong(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.right]

    @property
    def judged(self) -> list[Outcome]:
        """The runs with a ground truth: a label "unknown" says the labeller could not judge the
        curves, so no verdict of the tool is right or wrong there (they count in :attr:`right` /
        :attr:`total` only as runs the tool must call UNKNOWN, the regression floor's measure)."""
        return [o for o in self.outcomes if o.label.verdict != "unknown"]

    @property
    def healthy(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.label.verdict == "healthy"]

    @property
    def false_alarm_runs(self) -> list[Outcome]:
        return [o for o in self.healthy if o.false_alarms]

    def unexplained_false_alarms(self) -> list[tuple[Outcome, list[str]]]:
        """False alarms on healthy-labelled runs that no known miss documents."""
        known = {(k.folder, k.run): set(k.symptoms) for k in self.known_misses}
        out = []
        for o in self.false_alarm_runs:
            extra = [s for s in o.false_alarms if s not in known.get(o.label.key, set())]
            if extra:
                out.append((o, extra))
        return out

    def per_symptom(self) -> dict[str, tuple[int, int, int]]:
        """symptom -> (true positives, false positives, false negatives)."""
        tp: Counter[str] = Counter()
        fp: Counter[str] = Counter()
        fn: Counter[str] = Counter()
        for o in self.outcomes:
            if not o.found:
                fn.update(o.label.must)
                continue
            for s in o.label.must:
                (tp if s in o.symptoms else fn)[s] += 1
            for s in o.symptoms:
                if s not in o.label.must and (s in o.label.never or o.label.verdict == "healthy"):
                    fp[s] += 1
        return {s: (tp[s], fp[s], fn[s]) for s in sorted(set(tp) | set(fp) | set(fn))}


def load_labels(path: Path = LABELS) -> tuple[list[Label], list[KnownMiss], dict]:
    """The labels, the known misses and the raw document (``min_right`` / ``min_right_held_out``
    per set, and the description)."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    labels = [
        Label(
            folder=r["folder"],
            run=r["run"],
            verdict=r["verdict"],
            must=tuple(r.get("must", ())),
            never=tuple(r.get("never", ())),
            why=r.get("why", ""),
            repository=r.get("repository", ""),
            framework=r.get("framework", ""),
        )
        for r in doc["runs"]
    ]
    known = [
        KnownMiss(folder=k["folder"], run=k["run"], symptoms=tuple(k["symptoms"]), mechanism=k["mechanism"])
        for k in doc.get("known_misses", ())
    ]
    return labels, known, doc


def validate(labels: Sequence[Label], known: Sequence[KnownMiss] = ()) -> list[str]:
    """What is wrong with the labels themselves: unknown words, contradictions, duplicates."""
    from ppo_doctor.results import SYMPTOMS

    problems = []
    seen: set[tuple[str, str]] = set()
    for lab in labels:
        where = f"{lab.folder} :: {lab.run}"
        if lab.key in seen:
            problems.append(f"{where}: labelled twice")
        seen.add(lab.key)
        if lab.verdict not in VERDICTS:
            problems.append(f"{where}: verdict {lab.verdict!r} is not one of {VERDICTS}")
        for s in (*lab.must, *lab.never):
            if s not in SYMPTOMS:
                problems.append(f"{where}: {s!r} is not a symptom (ppo_doctor.results.SYMPTOMS)")
        if set(lab.must) & set(lab.never):
            problems.append(f"{where}: {sorted(set(lab.must) & set(lab.never))} both required and forbidden")
        if lab.must and lab.verdict != "unhealthy":
            problems.append(f"{where}: a {lab.verdict} run cannot require symptoms")
        if not lab.why:
            problems.append(f"{where}: no 'why'")
    for k in known:
        if (k.folder, k.run) not in seen:
            problems.append(f"known miss {k.folder} :: {k.run} names no labelled run")
        if not k.mechanism:
            problems.append(f"known miss {k.folder} :: {k.run} has no mechanism")
    return problems


def score_labels(
    labels: Iterable[Label], shared: Path = SHARED, config_for: Callable[[str], Mapping[str, Any] | None] | None = None
) -> list[Outcome]:
    """Analyse each labelled folder once and match its labelled runs by id; ``config_for(folder)``
    gives the settings a folder is analysed with (default settings when None)."""
    from ppo_doctor.analyze import analyze

    by_folder: dict[str, list[Label]] = {}
    for lab in labels:
        by_folder.setdefault(lab.folder, []).append(lab)
    outcomes = []
    for folder, labs in by_folder.items():
        report = analyze(str(shared / folder), config_for(folder) if config_for is not None else None)
        runs = {rr.run.id: rr for rr in report.runs}
        for lab in labs:
            rr = runs.get(lab.run)
            if rr is None:
                log.warning("%s: no run %r (runs: %s)", folder, lab.run, sorted(runs))
                outcomes.append(Outcome(lab, None))
                continue
            symptoms = tuple(rr.symptoms_at_or_above(FLOOR))
            codes = tuple(dict.fromkeys(f.code for f in rr.findings if f.symptom in symptoms and _counts(f.severity)))
            outcomes.append(Outcome(lab, rr.verdict, symptoms, codes))
    return outcomes


def _counts(severity: str) -> bool:
    from ppo_doctor.results import SEVERITY_RANK

    return SEVERITY_RANK[severity] >= SEVERITY_RANK[FLOOR]


def score(labels_path: Path = LABELS, shared: Path = SHARED) -> Card:
    """The card of the labels file scored against the logs under ``shared``, with the shipped
    population limits (the runs it was measured on included: the *seen* figure)."""
    labels, known, _ = load_labels(labels_path)
    labels, absent = present(labels, shared)
    t0 = time.perf_counter()
    outcomes = score_labels(labels, shared)
    return Card(outcomes, known, time.perf_counter() - t0, absent)


# Each rule parameter that the reference population sets, by the sign that sets it
# (ppo_doctor.rules.population; the rules read the same limits from population.json).
POPULATION_PARAMS = {
    "kl_ref_seq": ("kl-above-band", "seq_runaway"),
    "kl_ref_token": ("kl-above-band", "token_runaway"),
    "kl_old": ("approx-kl-high", "runaway_kl"),
    "clipfrac": ("clipfrac-high", "runaway_clipfrac"),
}


def population_config(table: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """Rule settings with every population-derived limit taken from ``table``; a sign the table
    is too thin for gets the rule's documented fallback (the ``limit`` default with no file)."""
    from ppo_doctor.rules import population
    from ppo_doctor.rules.registry import get

    rules: dict[str, dict[str, float]] = {}
    for sign, (rule, param) in POPULATION_PARAMS.items():
        entry = table.get(sign, {})
        rules.setdefault(rule, {})[param] = float(entry.get("limit", population.FALLBACKS[sign]))
    assert all(get(r) is not None for r in rules), "a population parameter names an unknown rule"
    return {"rules": rules}


def score_held_out(labels_path: Path = LABELS, shared: Path = SHARED) -> Card:
    """Leave-one-repository-out: each repository's runs analysed with the population limits
    measured on the healthy runs of every *other* repository (:mod:`benchmarks.population`), so
    that no threshold a run is judged by was chosen with it."""
    from benchmarks.population import calibration, samples
    from ppo_doctor.rules import population

    labels, known, doc = load_labels(labels_path)
    labels, absent = present(labels, shared)
    t0 = time.perf_counter()
    measured = samples(calibration(labels, doc), shared)
    repo_of = {lab.folder: lab.repository or lab.folder for lab in labels}

    def config_for(folder: str) -> dict[str, Any]:
        held_out = repo_of[folder]
        return population_config(population.table(s for lab, s in measured if s.repository != held_out))

    outcomes = score_labels(labels, shared, config_for)
    return Card(outcomes, known, time.perf_counter() - t0, absent)


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.0f}%" if den else "-"


def render(card: Card) -> str:
    """The card as markdown: summary, make-up, per symptom, false alarms, wrong runs."""
    labels = [o.label for o in card.outcomes]
    counts = Counter(lab.verdict for lab in labels)
    repos = {lab.repository or lab.folder for lab in labels}
    frameworks = Counter(lab.framework for lab in labels if lab.framework)
    lines = [
        "## Summary",
        "",
        f"- right: **{card.right}/{card.total}** ({_pct(card.right, card.total)}): verdict equal to the label,"
        " every required symptom present, no forbidden one (symptoms from severity warning up)",
        f"- right on the runs with a ground truth (labelled healthy or unhealthy): **{sum(o.right for o in card.judged)}/{len(card.judged)}**"
        f" ({_pct(sum(o.right for o in card.judged), len(card.judged))}); calling every run healthy scores"
        f" {sum(o.label.verdict == 'healthy' and not o.label.must for o in card.judged)}/{len(card.judged)}",
        f"- false alarms on healthy-labelled runs: {len(card.false_alarm_runs)}/{len(card.healthy)} runs"
        f" ({sum(len(o.false_alarms) for o in card.false_alarm_runs)} training symptoms; log-quality warnings,"
        f" which never decide a verdict, on {sum(o.log_warnings for o in card.healthy)} more)",
        f"- runs: {card.total} from {len(repos)} repositories ({len({lab.folder for lab in labels})} folders);"
        f" healthy {counts['healthy']}, unhealthy {counts['unhealthy']} ({_pct(counts['unhealthy'], card.total)}),"
        f" unknown {counts['unknown']}",
        "- frameworks: " + ", ".join(f"{name} {n}" for name, n in frameworks.most_common()),
        "- right per set: " + ", ".join(f"{s} {n}/{sum(o.label.set == s for o in card.outcomes)}" for s, n in card.right_per_set().items()),
        *([f"- not scored (absent from this copy of ../shared): {', '.join(card.absent_sets)}"] if card.absent_sets else []),
        f"- analysis time: {card.seconds:.0f} s",
        "",
        "## Per symptom",
        "",
        "A detection counts as a true positive where the label requires it, as a false positive where"
        " the label forbids it or the run is labelled healthy, and neither way elsewhere.",
        "",
        "| symptom | required | found | false positives | recall | precision |",
        "|---|---|---|---|---|---|",
    ]
    for s, (tp, fp, fn) in card.per_symptom().items():
        lines.append(f"| {s} | {tp + fn} | {tp} | {fp} | {_pct(tp, tp + fn)} | {_pct(tp, tp + fp)} |")
    lines += ["", "## False alarms on healthy-labelled runs", ""]
    if card.false_alarm_runs:
        known = {(k.folder, k.run) for k in card.known_misses}
        lines += ["| folder | run | symptoms | rule codes | known miss |", "|---|---|---|---|---|"]
        for o in card.false_alarm_runs:
            lines.append(
                f"| {o.label.folder} | {_cell(o.label.run)} | {', '.join(o.false_alarms)} | {', '.join(o.codes)} |"
                f" {'yes' if o.label.key in known else 'no'} |"
            )
    else:
        lines.append("None.")
    lines += ["", "## Wrong runs", ""]
    if card.wrong:
        lines += ["| folder | run | labelled | got | what was wrong | rule codes |", "|---|---|---|---|---|---|"]
        for o in card.wrong:
            want = o.label.verdict + (f" ({', '.join(o.label.must)})" if o.label.must else "")
            got = f"{o.verdict} ({', '.join(o.symptoms)})" if o.symptoms else str(o.verdict)
            lines.append(
                f"| {o.label.folder} | {_cell(o.label.run)} | {want} | {got} | {o.what_was_wrong()} |"
                f" {', '.join(o.codes) or '-'} |"
            )
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--shared", type=Path, default=SHARED, help="the folder holding corpus/ and realruns/")
    parser.add_argument(
        "--loro", action="store_true", help="leave-one-repository-out: population limits measured without each scored repository"
    )
    args = parser.parse_args(argv)
    if not args.shared.is_dir():
        print(f"{args.shared} is absent: nothing to score", file=sys.stderr)
        return 2
    labels, known, _ = load_labels(args.labels)
    problems = validate(labels, known)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    print(render(score_held_out(args.labels, args.shared) if args.loro else score(args.labels, args.shared)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

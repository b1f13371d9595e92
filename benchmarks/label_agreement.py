"""Two labellers (issue 37): how often a second blind labeller agrees with the first.

    python -m benchmarks.label_agreement [--second FILE] [--shared DIR] [--tool]

``tests/data/real_labels_second.json`` labels again, blind, a random sample of the runs of
``tests/data/real_labels.json``.  Each labeller is scored against the other exactly as
:mod:`benchmarks.real_scorecard` scores the doctor: *right* when the verdict is the same, every
symptom the other requires is among this one's required symptoms and none the other forbids is.
The figure bounds what any detector can be shown to reach against one labeller: where two careful
people disagree, the label is an opinion, not a ground truth.

``--tool`` also analyses the sampled runs (the logs under ``../shared``) and scores the doctor
against each labeller, and on the *consensus* runs (the second labeller right against the first),
where a miss is the doctor's own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from benchmarks.real_scorecard import LABELS, SHARED, Label, Outcome, load_labels, present, score_labels, validate

SECOND = LABELS.with_name("real_labels_second.json")

__all__ = ["SECOND", "agreement", "answers", "main", "render", "tool_figures"]


def answers(truth: Label, answer: Label) -> bool:
    """Whether ``answer`` (another labeller's verdict and required symptoms) is right against
    ``truth``, as the scorecard judges the doctor."""
    return Outcome(truth, answer.verdict, tuple(answer.must)).right


def _pairs(first: Iterable[Label], second: Iterable[Label]) -> list[tuple[Label, Label]]:
    by_key = {lab.key: lab for lab in first}
    return [(by_key[lab.key], lab) for lab in second if lab.key in by_key]


def agreement(first: Iterable[Label], second: Iterable[Label]) -> dict[str, int]:
    """``runs`` labelled twice, ``verdicts_agree``, ``second_right`` (the second labeller scored
    against the first) and ``first_right`` (the first against the second)."""
    pairs = _pairs(first, second)
    return {
        "runs": len(pairs),
        "verdicts_agree": sum(a.verdict == b.verdict for a, b in pairs),
        "second_right": sum(answers(a, b) for a, b in pairs),
        "first_right": sum(answers(b, a) for a, b in pairs),
    }


def tool_figures(first: Sequence[Label], second: Sequence[Label], shared: Path = SHARED) -> dict[str, int]:
    """The doctor on the twice-labelled runs present under ``shared``: right against the first
    labels, against the second, and on the consensus runs (the second labeller right against the
    first)."""
    pairs = _pairs(first, second)
    here, _ = present([a for a, _ in pairs], shared)
    keys = {lab.key for lab in here}
    pairs = [(a, b) for a, b in pairs if a.key in keys]
    outcomes = {o.label.key: o for o in score_labels([a for a, _ in pairs], shared)}
    consensus = [(a, b) for a, b in pairs if answers(a, b)]
    return {
        "runs": len(pairs),
        "right_vs_first": sum(outcomes[a.key].right for a, _ in pairs),
        "right_vs_second": sum(Outcome(b, outcomes[a.key].verdict, outcomes[a.key].symptoms).right for a, b in pairs),
        "consensus": len(consensus),
        "right_on_consensus": sum(outcomes[a.key].right for a, _ in consensus),
    }


def render(agree: Mapping[str, int], tool: Mapping[str, int] | None = None) -> str:
    n = agree["runs"]
    lines = [
        "| who is scored | against | right |",
        "|---|---|---|",
        f"| second labeller | first labels | {agree['second_right']}/{n} |",
        f"| first labeller | second labels | {agree['first_right']}/{n} |",
    ]
    if tool is not None:
        m = tool["runs"]
        lines += [
            f"| the doctor | first labels | {tool['right_vs_first']}/{m} |",
            f"| the doctor | second labels | {tool['right_vs_second']}/{m} |",
            f"| the doctor | consensus runs (both labellers agree) | {tool['right_on_consensus']}/{tool['consensus']} |",
        ]
    lines += ["", f"Verdicts agree on {agree['verdicts_agree']}/{n} runs."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--second", type=Path, default=SECOND)
    parser.add_argument("--shared", type=Path, default=SHARED, help="the folder holding corpus/ and realruns/")
    parser.add_argument("--tool", action="store_true", help="also analyse the sampled runs and score the doctor")
    args = parser.parse_args(argv)
    first, _, _ = load_labels(args.labels)
    second, _, _ = load_labels(args.second)
    problems = validate(second)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    tool = tool_figures(first, second, args.shared) if args.tool else None
    print(render(agreement(first, second), tool), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which metric names measure the task itself: an accuracy, a success, pass or win rate, a rating.

The held-out evaluation and these are what a run's author reports; a shaping term (a format
score, a term of the reward) or a running best of one is not.  The rules read them beside the
reward (``rules.outcome``), and the verdict judges a run that logs no reward on them.  This module
knows names, nothing of rules.
"""

from __future__ import annotations

import re

# What a task metric is called when it measures the task itself (accuracy, success, a pass rate),
# as opposed to a shaping term (format, length): the held-out evaluation and these are what the
# run's author reports.  A self-play rating (ML-Agents' ``Self-play/ELO``) is one too: in an
# adversarial game the reward depends on the opponent's skill, so the rating is what tracks
# learning (ML-Agents docs, ELO-Rating-System.md: "if the training performs correctly, this value
# should steadily increase").
TASK_NAME = re.compile(r"(^|[/_.])(acc|accuracy|correct|correctness|success|success_rate|pass_rate|solved?|solve_rate|win_rate|final_ans|elo|rating)($|[/_.])", re.I)
# A task metric's running best or a batch extreme (``best_answer_accuracy``, ``max_accuracy``) only
# ever rises or says nothing of the level: never evidence that the task improved.
EXTREME_NAME = re.compile(r"(^|[/_.])(best|max|min|peak|top|std)($|[/_.])", re.I)
# A term of the reward, as legged_gym / rsl_rl and the Isaac Gym tasks built on them log each one
# (``Episode/rew_<term>``, legged_robot.py: ``extras["episode"]["rew_" + key]``): a bonus or a
# penalty the reward sums, never the task measured apart from it (``rew_dof_acc`` penalises joint
# accelerations; its "acc" is no accuracy).
REWARD_TERM_NAME = re.compile(r"(^|/)rew_", re.I)


def is_task_metric(name: str) -> bool:
    """A metric that measures the task itself (:data:`TASK_NAME`), not a format score, a term of
    the reward (:data:`REWARD_TERM_NAME`) nor a running best or extreme of one (:data:`EXTREME_NAME`)."""
    return (
        bool(TASK_NAME.search(name))
        and "format" not in name.lower()
        and not REWARD_TERM_NAME.search(name)
        and not EXTREME_NAME.search(name)
    )

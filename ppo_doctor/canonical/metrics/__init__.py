"""Canonical metric vocabulary, per-framework alias tables and :func:`build_run`.

Every framework names the same quantity differently (TRL ``objective/kl``, OpenRLHF
``train/kl``, veRL ``actor/kl_loss``, trlx ``policy/sqrt_kl`` ...) and, worse, means
different things by it: a KL may be the k1 estimator (can be < 0) or k3 (>= 0), summed
over the response or averaged per token, a square root (trlx), or logged negated (SB3's
``train/entropy_loss``).  This package

* takes the framework guessed from the tag names and the config
  (:func:`ppo_doctor.canonical.frameworks.guess_framework`);
* maps raw tags onto the canonical names of ``docs/metrics.md`` (:mod:`.vocabulary`)
  with one ordered alias table per framework (:data:`ALIASES`, :mod:`.aliases`; :mod:`.mapping`): at most one raw tag per canonical metric,
  the first present in table order wins, user aliases override, anything else keeps its
  raw name;
* records per canonical metric what the number means (:class:`~ppo_doctor.run.MetricInfo`),
  so rules judge a value in the units it was logged in; the data itself is never
  rescaled, squared or negated;
* builds the :class:`~ppo_doctor.run.Run` (:func:`build_run`, :mod:`.build`, called by the
  ingest orchestrator) with the normalised hyper-parameters of :mod:`ppo_doctor.canonical.hparams`.

``python -m ppo_doctor.canonical.metrics > docs/metrics.md`` regenerates the reference page from
these tables (:mod:`.docs`).
"""

from ..frameworks import CONFIG_MARKERS, FRAMEWORKS, MARKERS, candidate_keys, framework_scores, guess_framework
from .aliases import ALIASES, Alias
from .build import build_run
from .docs import main, render_markdown
from .mapping import DENSER_SYNONYM, MappingResult, can_be_negative, map_tags, table_for
from .vocabulary import CANONICAL, FINAL_TOTALS, NONNEGATIVE_ESTIMATORS

__all__ = [
    "CANONICAL",
    "FINAL_TOTALS",
    "FRAMEWORKS",
    "ALIASES",
    "Alias",
    "MARKERS",
    "CONFIG_MARKERS",
    "NONNEGATIVE_ESTIMATORS",
    "DENSER_SYNONYM",
    "MappingResult",
    "build_run",
    "guess_framework",
    "framework_scores",
    "map_tags",
    "table_for",
    "candidate_keys",
    "can_be_negative",
    "render_markdown",
    "main",
]

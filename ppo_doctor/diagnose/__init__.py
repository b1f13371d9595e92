"""Diagnosis: from findings (symptoms) and the run's own config to ranked causes with fixes.

* :mod:`.catalog` — every cause the guides name (id, title, explanation, fixes, source);
* :mod:`.evidence` — what the run's hyper-parameters and logged values say for or against each cause;
* :mod:`.rank` — :func:`rank_causes`, called by :func:`ppo_doctor.analyze.analyze_run`.
"""

from __future__ import annotations

from .catalog import CAUSE_IDS, CAUSES, SYMPTOM_CAUSES, Cause, get_cause
from .rank import rank_causes

__all__ = ["rank_causes", "Cause", "CAUSES", "CAUSE_IDS", "SYMPTOM_CAUSES", "get_cause"]

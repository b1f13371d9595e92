"""``python -m ppo_doctor.cli``: the ``ppo-doctor`` command."""

from __future__ import annotations

from . import main

main()

"""python -m ppo_doctor: the ppo-doctor command."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())

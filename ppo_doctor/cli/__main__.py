"""python -m ppo_doctor.cli: the ppo-doctor command."""

from __future__ import annotations

import sys

from . import main

sys.exit(main())

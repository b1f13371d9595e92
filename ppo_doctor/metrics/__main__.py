"""``python -m ppo_doctor.metrics > docs/metrics.md`` regenerates the metrics reference page."""

from .docs import main

main()

"""``python -m ppo_doctor.canonical.metrics > docs/metrics.md`` regenerates the metrics reference page."""

from .docs import main

main()

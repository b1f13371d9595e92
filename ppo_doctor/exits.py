"""The exit codes of every command, in one place (docs/architecture.md#contracts, docs/cli.md).

The library computes them too (:meth:`ppo_doctor.watch.Watcher.finish` ends a watch with
``check``'s code), so they live outside the CLI package.
"""

from __future__ import annotations

EXIT_OK = 0
# check / watch: a finding at or above --fail-on; simulate: --stop-on stopped the run;
# validate --strict: the scorecard did not pass
EXIT_FINDINGS = 1
# usage error, bad configuration, or nothing readable in the given paths
EXIT_ERROR = 2

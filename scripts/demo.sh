#!/usr/bin/env bash
# Set up a virtual environment and run the main job on sample_logs/ (the README's demo command).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e .
ppo-doctor report sample_logs/ "$@"

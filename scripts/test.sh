#!/usr/bin/env bash
# Set up a virtual environment and run the whole test suite (the README's test command).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# The exact CPU torch first, so the [reference] extra's torch range is already satisfied.
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[dev,reference,trl]"
python -m pytest "$@"

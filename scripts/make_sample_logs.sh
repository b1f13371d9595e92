#!/usr/bin/env bash
# Regenerate sample_logs/ with the bundled reference PPO loop (needs the [reference] extra:
# torch, transformers, tensorboard).  Fixed seeds and --fake-clock make the JSON files
# byte-identical between runs; TensorBoard files differ only in the time the writer stamps on
# its first record.  About 5 minutes on 2 CPU cores (the SFT models are cached in
# ~/.cache/ppo_doctor or $PPO_DOCTOR_CACHE).
#
#   bash scripts/make_sample_logs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then
  . .venv/bin/activate
fi
STEPS=${STEPS:-120}

# name  format flags...   (see sample_logs/README.md for what each run shows)
RUNS=(
  "healthy-s1 --format tensorboard --format jsonl --format trainer_state"
  "kl-coef-zero --format tensorboard"
  "min-length --format jsonl"
  "lr-x100 --format trainer_state"
  "hackable-reward --format tensorboard --format jsonl --tb-prefix train/"
)

for spec in "${RUNS[@]}"; do
  read -r name flags <<<"$spec"
  rm -rf "sample_logs/$name"
  # shellcheck disable=SC2086  # the flags are meant to split
  ppo-doctor simulate "$name" -o "sample_logs/$name" --steps "$STEPS" --fake-clock $flags
done
du -sh sample_logs

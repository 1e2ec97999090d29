#!/usr/bin/env bash
# Train LoG end to end for one seed: stage 1 (local) then stage 2 (global), from the run configs.
#   research/train_log.sh SEED OUT_DIR
# e.g. research/train_log.sh 13 logrerank/checkpoints/log-reranker  (the bundled model)
#      research/train_log.sh 17 runs/log-seed17             (extra seeds for mean +- std)
# Logs go to runs/train-log-seed$SEED-{local,global}.log; both stages resume from runs/train-state.
# THREADS=1 when another job shares a 2-core machine (oversubscribed torch threads spin-wait).
set -euo pipefail
seed=${1:?seed}
out=${2:?output checkpoint folder}
threads=${THREADS:-2}
mkdir -p runs
logrerank train local --config configs/local.json \
  --set seed="$seed" --set out="runs/log-local-s$seed" --set state_dir="runs/train-state/local-s$seed" --set threads="$threads" \
  > "runs/train-log-seed$seed-local.log" 2>&1
logrerank train global --config configs/global.json \
  --set seed="$seed" --set init="runs/log-local-s$seed" --set out="$out" \
  --set state_dir="runs/train-state/global-s$seed" --set threads="$threads" \
  > "runs/train-log-seed$seed-global.log" 2>&1
echo "seed $seed done: $out"

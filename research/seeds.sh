#!/usr/bin/env bash
# Extra seeds for mean +- std: full two-stage training per seed, then LoG rows on the
# dev benchmarks (same pools as research/eval_all.sh).
#   research/seeds.sh 17 23
set -euo pipefail
for seed in "$@"; do
  research/train_log.sh "$seed" "runs/log-seed$seed"
  for b in scifact citint; do
    logrerank eval --benchmark "$b" --rankers log,log-local --checkpoint "runs/log-seed$seed" \
      --out "runs/seeds/seed$seed/$b" --quiet
  done
done

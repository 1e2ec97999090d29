#!/usr/bin/env bash
# Extra seeds for mean +- std (issue 4): full two-stage training per seed, then LoG rows on the
# dev benchmarks (same pools as scripts/eval_all.sh).
#   scripts/seeds.sh 17 23
set -euo pipefail
for seed in "$@"; do
  scripts/train_log.sh "$seed" "runs/log-seed$seed"
  for b in scifact citint; do
    logrerank eval --benchmark "$b" --rankers log,log-local --checkpoint "runs/log-seed$seed" \
      --out "runs/seeds/seed$seed/$b" --quiet
  done
done

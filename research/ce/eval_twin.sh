#!/usr/bin/env bash
# The cross-encoder twin after `logrerank train local --config configs/twin.json`: choose its
# score adjustments on train queries (tune-score), then evaluate it next to LoG on the four
# benchmarks of the cross-encoder bar. LoG's multi-hop figures are out of fold (its graph stage
# trained on those samples), so only the twin runs there (zero-shot, like the cross-encoder).
#   research/ce/eval_twin.sh runs/twin runs/eval-twin [LIMIT]
set -euo pipefail
TWIN=$1; OUT=$2; LIMIT=${3:+--limit $3}
mkdir -p "$OUT"
logrerank tune-score --checkpoint "$TWIN" --cache "$OUT/select" > "$OUT/tune_score.json"
for b in scifact citint; do
  logrerank eval --benchmark "$b" --rankers log,log-local,cross-encoder-twin --twin "$TWIN" \
    --out "$OUT/$b" --quiet $LIMIT
done
for b in hotpotqa musique; do
  logrerank eval --benchmark "$b" --rankers cross-encoder-twin --twin "$TWIN" --out "$OUT/$b" \
    --quiet $LIMIT
done

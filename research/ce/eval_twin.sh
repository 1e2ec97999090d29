#!/usr/bin/env bash
# The cross-encoder twin after `logrerank train local --config configs/twin.json`: choose its
# score adjustments (tune-score) and its lexical prior (tune-score --lexical) on train queries,
# as for LoG, then evaluate it on the four benchmarks of the cross-encoder bar (zero-shot on the
# multi-hop samples, like the cross-encoder).
#   research/ce/eval_twin.sh runs/twin runs/eval-twin [LIMIT]
set -euo pipefail
TWIN=$1; OUT=$2; LIMIT=${3:+--limit $3}
mkdir -p "$OUT"
logrerank tune-score --checkpoint "$TWIN" --cache "$OUT/select" > "$OUT/tune_score.json"
logrerank tune-score --checkpoint "$TWIN" --cache "$OUT/select" --lexical > "$OUT/tune_lexical.json"
for b in citint scifact hotpotqa musique; do
  logrerank eval --benchmark "$b" --rankers cross-encoder-twin --twin "$TWIN" --out "$OUT/$b" \
    --passage-cache-mb 3000 \
    --quiet $LIMIT
done

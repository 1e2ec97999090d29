#!/usr/bin/env bash
# LoG in every title condition on the same 50 sampled queries per set as the baselines
# (docs/evaluation.md, "Title conditions"). The local stage does not read titles, so the pools
# are encoded once (full titles) and the other conditions reuse the encodings from --encodings.
# Usage: research/titles_eval.sh [CHECKPOINT=logrerank/checkpoints/log-reranker] [OUT=runs/titles]
set -euo pipefail
CKPT=${1:-logrerank/checkpoints/log-reranker}
OUT=${2:-runs/titles}
ENC=${3:-runs/enc-eval}
mkdir -p "$OUT" "$ENC"
for t in full first3 none; do
  for b in scifact citint evinf; do
    split=(); [ "$b" = evinf ] && split=(--split test)
    logrerank eval --benchmark $b "${split[@]}" --sample 50 --titles $t --rankers log,log-local \
      --checkpoint "$CKPT" --encodings "$ENC" --out "$OUT/$b-$t-log" --quiet
  done
done

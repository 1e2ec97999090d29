#!/usr/bin/env bash
# Every cross-encoder-relevant ranker on the four benchmarks of the cross-encoder bar, for one
# cross-encoder folder: research/ce/eval_ce.sh runs/ce-prior/ckpt runs/eval-ce [LIMIT]
set -euo pipefail
CE=$1; OUT=$2; LIMIT=${3:+--limit $3}
R=bm25,bi-encoder,bi-encoder-passage,cross-encoder,cross-encoder-nolex,ce-stage
for b in citint scifact hotpotqa musique; do
  extra=""; if [ "$b" = scifact ] || [ "$b" = citint ]; then extra="first-pass,"; fi
  logrerank eval --benchmark "$b" --rankers "${extra}$R" --cross-encoder "$CE" --out "$OUT/$b" --quiet $LIMIT
done

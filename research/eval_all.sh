#!/usr/bin/env bash
# Every ranker on the same pools, one `logrerank eval` run per benchmark (README results table).
#   research/eval_all.sh [CHECKPOINT] [OUT_ROOT]
set -euo pipefail
ckpt=${1:-logrerank/checkpoints/log-reranker}
root=${2:-runs/final}
all=first-pass,bm25,bm25-sent,bi-encoder,bi-encoder-passage,cross-encoder,cross-encoder-sent,ce-stage,evidence-graph,evidence-graph-ce,log,log-local,log-nocross,log-untyped
for b in scifact citint hotpotqa musique pubmedqa; do
  logrerank eval --benchmark "$b" --rankers "$all" --checkpoint "$ckpt" --out "$root/$b" --quiet \
    > "$root-$b.log" 2>&1
  echo "$b done $(date)"
done

#!/usr/bin/env bash
# The one-stage LoG against the baselines in every title condition, on the same 50 sampled
# queries per set (SciFact dev, Citation-Integrity dev, Evidence Inference test), then the paired
# tests of docs/evaluation.md ("The one-stage LoG"). LoG's local stage does not read
# titles, so its pools are encoded once (full titles) and reused (--encodings). With full titles
# every ranker runs; with cut or no titles LoG, local only and BM25 run (the cut-title
# cross-encoder and bi-encoder cells are the runs of docs/evaluation.md, "Title conditions");
# CE_ALL=1 runs every ranker everywhere.
# Usage: research/one_eval.sh [CHECKPOINT=logrerank/checkpoints/log-reranker] [OUT=runs/one] [N=50]
# (about 55 min on 2 cores; a set whose results.json exists is skipped)
set -euo pipefail
CKPT=${1:-logrerank/checkpoints/log-reranker}
OUT=${2:-runs/one}
N=${3:-50}
ENC="$OUT/encodings"
mkdir -p "$OUT" "$ENC"
for t in full first3 none; do
  for b in scifact evinf citint; do
    split=(); [ "$b" = evinf ] && split=(--split test)
    rankers=log,log-local,bm25
    if [ "$t" = full ] || [ -n "${CE_ALL:-}" ]; then
      rankers=$rankers,bi-encoder-passage,cross-encoder
    fi
    [ -f "$OUT/$b-$t/results.json" ] && continue
    logrerank eval --benchmark $b "${split[@]}" --sample "$N" --titles $t --rankers $rankers \
      --checkpoint "$CKPT" --encodings "$ENC" --out "$OUT/$b-$t" --quiet
  done
done
for t in full first3 none; do
  for b in scifact evinf citint; do
    r="$OUT/$b-$t"
    for other in log-local cross-encoder bi-encoder-passage bm25; do
      if grep -q "\"$other\"" "$r/results.json"; then
        logrerank paired-test "$r:log" "$r:$other"
      fi
    done
  done
done

#!/usr/bin/env bash
# The fair comparison of docs/evaluation.md ("Fair comparison"): the bundled cross-encoder
# (trained on LoG's sources), the cross-encoder bundled before it (SciFact + Citation-Integrity
# train only, taken from the git history) and LoG, on the same 50 sampled queries per set.
# Usage: research/ce/fair_eval.sh [OUT=runs/fair] [N=50]   (about 70 min on 2 cores)
set -euo pipefail
OUT=${1:-runs/fair}
N=${2:-50}
OLD=runs/cross-encoder-old
mkdir -p "$OUT" "$OLD"
for f in config.json delta.safetensors logrerank_delta.json tokenizer.json tokenizer_config.json; do
  [ -f "$OLD/$f" ] || git show 94612c8:logrerank/checkpoints/cross-encoder/$f > "$OLD/$f"
done
for b in scifact citint evinf; do
  split=(); [ "$b" = evinf ] && split=(--split test)
  logrerank eval --benchmark $b "${split[@]}" --sample "$N" --rankers cross-encoder --out "$OUT/$b-ce-fair" --quiet
  logrerank eval --benchmark $b "${split[@]}" --sample "$N" --rankers cross-encoder --cross-encoder "$OLD" --out "$OUT/$b-ce-old" --quiet
  logrerank eval --benchmark $b "${split[@]}" --sample "$N" --rankers log,log-local --out "$OUT/$b-log" --quiet
  logrerank paired-test "$OUT/$b-log:log" "$OUT/$b-ce-fair:cross-encoder"
  logrerank paired-test "$OUT/$b-log:log" "$OUT/$b-ce-old:cross-encoder"
  logrerank paired-test "$OUT/$b-log:log" "$OUT/$b-log:log-local"
  logrerank paired-test "$OUT/$b-ce-fair:cross-encoder" "$OUT/$b-ce-old:cross-encoder"
done

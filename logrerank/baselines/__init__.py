"""Baseline rankers: BM25, bi-encoder, the cross-encoder stage (cross-encoder over the BM25 top 25,
blended with the first pass) and the evidence-graph selector."""

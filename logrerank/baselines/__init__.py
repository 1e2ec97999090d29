"""Baseline rankers: BM25, bi-encoder, cross-encoder stage (seed 001), evidence graph (seed 002)."""

"""Evaluation: metrics, `logrerank eval` over the benchmarks, the paired test and run reports
(docs/evaluation.md). The speed and memory benchmarks live in the repository's bench/ folder."""

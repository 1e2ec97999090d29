"""Evaluation: metrics, `logrerank eval` over the benchmarks, the paired test, run reports and the
speed benchmark (docs/evaluation.md, bench/README.md)."""

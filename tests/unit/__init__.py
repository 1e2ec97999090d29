"""Unit tests: pure functions and the tiny random models of tests/conftest.py; no real backbone,
no public data, no browser."""

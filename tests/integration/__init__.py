"""Integration tests: the real packaged backbone and bundled checkpoints (``slow``), the public
data in ../shared/data (``data``), subprocess runs and the offline / network-guard checks."""

"""The local stage: the transformer backbone, query-sentence windows, the role-aware local
scorer and its batched, cached inference (the LoG-Reranker paper, eqs. 1-6)."""

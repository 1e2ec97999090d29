"""Training of the LoG reranker: stage 1 (local), stage 2 (global, its sweep and its
cross-validated multi-hop run), the passage score and the score tuning."""

"""The global stage: the typed sentence graph, its link relations, the relation-aware GAT layers
and the global reranker (the LoG-Reranker paper, eqs. 7-16)."""

"""Training of the cross-encoder baseline: groups, teacher, held-out evaluation, the
cross-validated run and the lexical prior."""

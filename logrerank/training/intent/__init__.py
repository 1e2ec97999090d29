"""Training of the question-intent classifier (a linear head on the role tagger's reading of
the question)."""

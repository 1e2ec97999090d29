"""Training of the sentence role tagger."""

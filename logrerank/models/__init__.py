"""Bundled auxiliary models: the role tagger (stage 1's role targets) and the cross-encoder."""

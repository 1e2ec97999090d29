"""Training: run configs and the training of LoG (stages 1 and 2, the stage-2 sweep), the
cross-encoder and the role tagger; the score adjustments chosen on train queries."""

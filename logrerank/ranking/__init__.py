"""Ranking: score adjustments, the passage score, sentence selection, the structured
context, the training objectives and the assembly of the final ranking."""

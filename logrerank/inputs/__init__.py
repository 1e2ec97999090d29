"""Input: reading passages from text and files, and the input limits (the first stage)."""

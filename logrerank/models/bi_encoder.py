"""The sentence embedder behind the bi-encoder baseline and the cross-encoder's prior.

Embeddings are mean-pooled and L2-normalised, as sentence-transformers does for
all-MiniLM-L6-v2 (max 256 word pieces, its ``max_seq_length``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..local import backbone as bb
from ..local.tokenize import pad_encoded, pad_length

PAD_MULTIPLE = 32
"""Default ``pad_multiple`` of the bi-encoder and the cross-encoder, in tokens: few distinct
batch shapes keep a long-running process's memory flat (bench/README.md,
"Decisions")."""


class BiEncoder:
    """Sentence embedder (mean pooling + L2 norm).

    Args:
        model_name_or_path: HF encoder folder; None = packaged all-MiniLM-L6-v2.
        max_length: word pieces per text.
        batch_size: texts per forward pass.
        device: "auto", "cpu", "cuda".
        precision: "auto" (bf16 where supported), "bf16" or "fp32".
        pad_multiple: pad each batch's length up to a multiple of this, at most ``max_length``
            (0 or 1: to its longest text only; padding is masked out of the mean).
        model: an already loaded encoder to embed with (shared, not copied), e.g. the frozen
            packaged encoder inside a LoG model; None = load ``model_name_or_path``.
        tokenizer: its tokenizer (with ``model``); None = load ``model_name_or_path``'s.
    """

    def __init__(
        self,
        model_name_or_path: str | None = None,
        max_length: int = 256,
        batch_size: int = 16,
        device: str = "auto",
        precision: str = "auto",
        pad_multiple: int = PAD_MULTIPLE,
        model: torch.nn.Module | None = None,
        tokenizer=None,
    ):
        self.device = bb.pick_device(device)
        self.tokenizer = (
            tokenizer if tokenizer is not None else bb.load_tokenizer(model_name_or_path)
        )
        if model is None:  # a shared model stays in the mode its owner keeps it in
            model = bb.load_encoder(model_name_or_path).to(self.device).eval()
        self.model = model
        self.max_length, self.batch_size = max_length, batch_size
        self.dtype = bb.autocast_dtype(self.device, precision)
        self.pad_multiple = max(0, int(pad_multiple))

    @torch.inference_mode()
    def embed(self, texts: list[str]) -> torch.Tensor:
        """``[len(texts), d]`` unit-norm embeddings (length-sorted batches)."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = torch.zeros(len(texts), self.model.config.hidden_size)
        pad_id = self.tokenizer.pad_token_id or 0
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            batch = [texts[i] for i in idx]
            enc = self.tokenizer(batch, truncation=True, max_length=self.max_length)
            width = pad_length(max(map(len, enc["input_ids"])), self.pad_multiple, self.max_length)
            enc = pad_encoded(enc, width, pad_id, device=self.device)
            with bb.autocast(self.device, self.dtype):
                h = self.model(**enc).last_hidden_state.float()  # [b, L, d]
            m = enc["attention_mask"].unsqueeze(-1).float()
            e = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
            out[idx] = F.normalize(e, dim=-1).cpu()
        return out

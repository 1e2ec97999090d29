"""Role-aware local sentence scoring (the LoG-Reranker paper, eqs. 1-6).

Each passage is encoded jointly with the query (windows from :mod:`logrerank.local.tokenize`, eq. 1).
Mean pooling over each token span gives the passage-conditioned query vector ``h_q^(i)`` and the
contextual sentence vectors ``h_ij``; intent, role and local heads turn them into the local
logits (eqs. 2-5).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..config import LocalConfig
from .packing import PACK_ROW_MULTIPLE, pack_segments


def mlp(d_in: int, d_hidden: int, d_out: int, dropout: float) -> nn.Sequential:
    """Two-layer MLP with GELU."""
    return nn.Sequential(
        nn.Linear(d_in, d_hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_hidden, d_out)
    )


@dataclass
class LocalOutput:
    """Per-batch outputs of the local scorer (M sentences, W windows)."""

    h_q: Tensor  # [W, d] passage-conditioned query vectors
    h_s: Tensor  # [M, d] contextual sentence vectors
    intent_logits: Tensor  # [W, 3]
    role_logits: Tensor  # [M, 3]
    logits: Tensor  # [M] local logits l_local (eq. 5)
    sent_window: Tensor  # [M] window of each sentence
    nodes: Tensor  # [M] node id of each sentence
    prior: Tensor | None = None  # [M] bi-encoder prior a * (cos - b) inside logits (isolated mode)
    # isolated mode with batch["keep_lower"]: the query-independent states, for SegmentCache.harvest
    lower: Tensor | None = None  # [B, L, d] states after the isolated layers
    prior_emb: Tensor | None = None  # [W + M, d] unit-norm packaged embedding of every span


class LocalScorer(nn.Module):
    """Encoder + intent, role and local heads (eqs. 1-6).

    Args:
        encoder: a Hugging Face encoder returning ``last_hidden_state``.
        config: head sizes and batching.
    """

    runtime_backend = None
    """Inference backend of the transformer layers (:class:`~logrerank.runtime.local_runtime.
    LocalRuntime`, set by ``LoGReranker``); None = torch. Used in eval mode only, while the
    weights are those it was exported from."""

    def __init__(self, encoder: nn.Module, config: LocalConfig):
        super().__init__()
        self.config = config
        self.encoder = encoder
        d = encoder.config.hidden_size
        h = config.head_hidden
        self.intent_head = mlp(d, h, 3, config.dropout)  # MLP_int (eq. 2)
        self.role_head = mlp(d, h, 3, config.dropout)  # MLP_role (eq. 3)
        self.interaction = nn.Linear(3, config.role_proj_dim)  # W_p (eq. 4)
        extra = d + 1 if config.interaction_features else 0  # [h_q * h_s; cos(h_q, h_s)]
        self.local_head = mlp(2 * d + config.role_proj_dim + extra, h, 1, config.dropout)  # eq. 5
        k = config.isolated_layers
        if k:
            layers = encoder.encoder.layer
            if not 0 < k < len(layers):
                raise ValueError(
                    f"local.isolated_layers must be in [0, {len(layers) - 1}] for this "
                    f"{len(layers)}-layer backbone, got {k}"
                )
            # trainable joint copy of the top layers; the encoder's own top layers stay the
            # frozen prior branch
            self.joint_layers = nn.ModuleList(copy.deepcopy(m) for m in layers[k:])
            self.joint_layers.requires_grad_(True)
            self.segment_emb = nn.Embedding(2, d)  # query / sentence segment, added before joint
            nn.init.zeros_(self.segment_emb.weight)
            self.prior_scale = nn.Parameter(torch.tensor(float(config.prior_scale)))
            # zero last layer: an untrained head leaves l_local = the bi-encoder prior
            nn.init.zeros_(self.local_head[-1].weight)
            nn.init.zeros_(self.local_head[-1].bias)

    def train(self, mode: bool = True) -> LocalScorer:
        """As ``nn.Module.train``, but in isolated mode the frozen packaged encoder (the prior
        branch) always runs without dropout."""
        super().train(mode)
        if self.config.isolated_layers:
            self.encoder.eval()
        return self

    @property
    def hidden_size(self) -> int:
        return self.encoder.config.hidden_size

    def head_parameters(self) -> list[nn.Parameter]:
        """Parameters of the heads (everything but the encoder)."""
        return [
            p for n, p in self.named_parameters() if not n.startswith(("encoder.", "joint_layers."))
        ]

    def joint_parameters(self) -> list[nn.Parameter]:
        """Parameters of the trainable joint top layers (isolated mode; else empty)."""
        return list(self.joint_layers.parameters()) if self.config.isolated_layers else []

    def active_runtime(self):
        """:attr:`runtime_backend` when it applies (eval mode, same weights), else None."""
        rt = self.runtime_backend
        return rt if rt is not None and not self.training and rt.serves(self) else None

    def _frozen_layers(self, ids: Tensor, pos: Tensor, seg: Tensor) -> tuple[Tensor, Tensor]:
        """The frozen packaged layers on one layout, attention kept inside each segment.

        Args:
            ids, pos: token and position ids ``[R, N]``.
            seg: segment id per token ``[R, N]`` (-1 = padding); tokens attend only to tokens of
                the same segment id in their row (pads attend to themselves).

        Returns:
            ``x`` [R, N, d] after the lowest ``isolated_layers`` layers and ``P`` [R, N, d]
            after all layers.
        """
        rt = self.active_runtime()
        if rt is not None:
            return rt.frozen(ids, pos, seg)
        enc, k = self.encoder, self.config.isolated_layers
        N = ids.size(1)
        eye = torch.eye(N, dtype=torch.bool, device=ids.device)[None]  # pads attend to themselves
        real = seg >= 0  # [R, N]
        iso = (((seg[:, :, None] == seg[:, None, :]) & real[:, :, None]) | eye)[:, None]
        with torch.no_grad():
            x = enc.embeddings(
                input_ids=ids, token_type_ids=torch.zeros_like(ids), position_ids=pos
            )
            for layer in enc.encoder.layer[:k]:
                x = layer(x, iso)
            P = x
            for layer in enc.encoder.layer[k:]:
                P = layer(P, iso)
        return x, P

    def _isolated_stack(self, ids: Tensor, pos: Tensor, span: Tensor) -> tuple[Tensor, Tensor]:
        """Frozen packaged layers with attention kept inside each span (no gradient).

        With ``LocalConfig.pack_length`` > 0 the segments are first packed into rows of that many
        tokens (:func:`pack_segments`; a window's query is run once when every window of the batch
        has the same one), so attention costs ``pack_length`` per token instead of the window
        length; the states are scattered back to the window layout. The same math as the window
        layout, up to float rounding (tested).

        Returns:
            ``x`` [B, L, d] after the lowest ``isolated_layers`` layers (input of the joint
            branch) and ``P`` [B, L, d] after all layers (the prior branch). Padding positions are
            zero in the packed layout.
        """
        if not self.config.pack_length:
            return self._frozen_layers(ids, pos, span)
        plan = pack_segments(span, ids, self.config.pack_length)
        B, L = ids.shape
        x_out = P_out = None
        for g, (rows, cols, src, long) in enumerate(plan.groups):  # slot (row, col) <- src
            R, N = int(rows.max()) + 1, int(cols.max()) + 1
            if not long:  # ordinary rows: a fixed width and, with pad_multiple, a row count
                N = max(N, self.config.pack_length)  # rounded up keep the batch shapes few
                if self.config.pad_multiple > 1:
                    R = -(-R // PACK_ROW_MULTIPLE) * PACK_ROW_MULTIPLE
            elif self.config.pad_multiple > 1:  # long segments: width as the windows'
                N = -(-N // self.config.pad_multiple) * self.config.pad_multiple
            g_ids = torch.zeros(R, N, dtype=ids.dtype, device=ids.device)
            g_pos = torch.zeros(R, N, dtype=pos.dtype, device=ids.device)
            g_seg = torch.full((R, N), -1, dtype=span.dtype, device=ids.device)
            b, t = plan.b_idx[src], plan.t_idx[src]
            g_ids[rows, cols] = ids[b, t]
            g_pos[rows, cols] = pos[b, t]
            g_seg[rows, cols] = plan.seg[src]
            x, P = self._frozen_layers(g_ids, g_pos, g_seg)  # [R, N, d] each
            if x_out is None:
                x_out = x.new_zeros(B, L, x.size(-1))
                P_out = P.new_zeros(B, L, P.size(-1))
            sel = (plan.token_group == g).nonzero().squeeze(1)  # window tokens reading group g
            bb, tt = plan.b_idx[sel], plan.t_idx[sel]
            rr, cc = plan.token_row[sel], plan.token_col[sel]
            x_out[bb, tt] = x[rr, cc].to(x_out.dtype)
            P_out[bb, tt] = P[rr, cc].to(P_out.dtype)
        return x_out, P_out

    @torch.no_grad()
    def encode_segments(self, segments: list[list[int]]) -> list[tuple[Tensor, Tensor]]:
        """Query-independent part of isolated mode for ``[CLS] x [SEP]`` token-id segments.

        A segment's lower-layer states and prior embedding do not depend on the query or on the
        other sentences of its window, so training can compute them once per sentence and pass
        them to :meth:`forward` as ``batch["lower"]`` / ``batch["prior_emb"]``.

        Returns:
            Per segment, ``(x [n, d]`` states after the isolated layers, ``e [d]`` unit-norm
            prior embedding ``)``.
        """
        n = max(len(t) for t in segments)
        dev = next(self.parameters()).device
        ids = torch.zeros(len(segments), n, dtype=torch.long)
        span = torch.full((len(segments), n), -1, dtype=torch.long)
        for i, t in enumerate(segments):
            ids[i, : len(t)] = torch.tensor(t)
            span[i, : len(t)] = 0
        ids, span = ids.to(dev), span.to(dev)
        pos = torch.arange(n, device=dev).expand(len(segments), n)
        x, P = self._isolated_stack(ids, pos, span)
        real = (span >= 0).unsqueeze(-1).float()
        e = torch.nn.functional.normalize((P.float() * real).sum(1) / real.sum(1), dim=-1)
        return [(x[i, : len(t)], e[i]) for i, t in enumerate(segments)]

    def _encode_isolated(self, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor | None, Tensor]:
        """Isolated lower layers, then the frozen prior branch and the trainable joint branch.

        Uses ``batch["lower"]`` (and skips the frozen layers) when the caller precomputed it.

        Returns:
            ``H`` [B, L, d] joint token states, ``P`` [B, L, d] prior (bi-encoder) states
            (None when precomputed states were given) and ``x`` [B, L, d] the lower states.
        """
        ids, span = batch["input_ids"], batch["span"]  # [B, L]
        B, L = ids.shape
        P = None
        if "lower" in batch:
            x = batch["lower"]
        else:
            x, P = self._isolated_stack(ids, batch["position_ids"], span)
        # key-padding mask [B, 1, 1, L]: every token attends to every real token of its window
        # (pad rows too, which keeps them finite; they are never pooled)
        joint = (span >= 0)[:, None, None, :]
        seg = (span >= B).long()  # [B, L] 1 = sentence segment (span ids >= B), 0 = query/pad
        H = x.detach() + self.segment_emb(seg).to(x.dtype)
        rt = self.active_runtime()
        if rt is not None:
            return rt.joint(H, span >= 0), P, x
        for layer in self.joint_layers:
            H = layer(H, joint)
        return H, P, x

    def forward(self, batch: dict[str, Tensor], targets: dict[str, Tensor] | None = None):
        """Score the sentences of a collated batch.

        Args:
            batch: output of :func:`logrerank.local.tokenize.collate`.
            targets: optional ``ranks`` [M], ``group`` [M], ``role_target`` [M, 3],
                ``role_mask`` [M], ``lam`` and ``tau`` floats; gives the eq. 22 loss.

        Returns:
            ``(LocalOutput, loss)``; loss is None without targets.
        """
        ids, span = batch["input_ids"], batch["span"]  # [B, L]
        W, M = ids.size(0), batch["nodes"].numel()
        keep = span >= 0
        idx = span[keep]  # [T]
        counts = torch.zeros(W + M, device=ids.device).index_add(
            0, idx, torch.ones_like(idx, dtype=torch.float)
        )

        def pool(states: Tensor) -> Tensor:  # [B, L, d] -> [W + M, d] span means
            summed = torch.zeros(W + M, states.size(-1), device=states.device)
            return summed.index_add(0, idx, states[keep].float()) / counts.clamp_min(1.0)[:, None]

        prior = lower = prior_emb = None
        if self.config.isolated_layers:
            H, P, x = self._encode_isolated(batch)  # [B, L, d] each
            # [W + M, d] unit-norm packaged embeddings: precomputed (encode_segments) or pooled
            e = batch["prior_emb"] if P is None else torch.nn.functional.normalize(pool(P), dim=-1)
            if batch.get("keep_lower") is not None:
                lower, prior_emb = x, e
            prior_cos = (e[:W][batch["sent_window"]] * e[W:]).sum(-1)  # [M]
            prior = self.prior_scale * (prior_cos - self.config.prior_shift)
        else:
            kwargs = {"input_ids": ids, "attention_mask": batch["attention_mask"]}
            if getattr(self.encoder.config, "type_vocab_size", 0) > 1:
                kwargs["token_type_ids"] = batch["token_type_ids"]
            rt = self.active_runtime()
            if rt is not None:
                H = rt.encoder(ids, batch["attention_mask"], kwargs.get("token_type_ids"))
            else:
                H = self.encoder(**kwargs).last_hidden_state  # [B, L, d]
        pooled = pool(H)
        h_q, h_s = pooled[:W], pooled[W:]  # [W, d], [M, d]
        intent_logits = self.intent_head(h_q)  # [W, 3]
        role_logits = self.role_head(h_s)  # [M, 3]
        win = batch["sent_window"]
        gamma = intent_logits.softmax(-1)[win]  # [M, 3], gamma replicated per sentence
        g = self.interaction(gamma * role_logits.softmax(-1))  # [M, role_proj_dim] (eq. 4)
        feats = [h_q[win], h_s, g]  # [M, 2d + role_proj_dim]
        if self.config.interaction_features:
            prod = h_q[win] * h_s
            cos = torch.nn.functional.cosine_similarity(h_q[win], h_s, dim=-1).unsqueeze(-1)
            feats += [prod, cos]
        logits = self.local_head(torch.cat(feats, dim=-1)).squeeze(-1)  # [M]
        if prior is not None:
            logits = logits + prior  # bi-encoder prior (isolated mode)
        out = LocalOutput(
            h_q,
            h_s,
            intent_logits,
            role_logits,
            logits,
            win,
            batch["nodes"],
            prior,
            lower,
            prior_emb,
        )
        loss = None
        if targets is not None:
            from ..ranking.losses import local_loss

            loss = local_loss(
                logits,
                targets["ranks"],
                targets["group"],
                role_logits,
                targets["role_target"],
                targets.get("role_mask"),
                lam=float(targets.get("lam", 0.5)),
                tau=float(targets.get("tau", 1.0)),
                reduction=str(targets.get("reduction", "mean")),
            )
        return out, loss

"""Role-aware local sentence scoring (paper eqs. 1-6).

Each passage is encoded jointly with the query, ``[CLS] q [SEP] s_1 [SEP] ... s_m [SEP]``
(eq. 1). Mean pooling over each token span gives the passage-conditioned query vector
``h_q^(i)`` and the contextual sentence vectors ``h_ij``. Passages longer than the window are
split into windows on sentence boundaries, so every sentence is scored exactly once, with the
query; a single sentence longer than the whole window is cut and flagged, never silently.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from .config import LocalConfig
from .segment import window_sentences


@dataclass
class Window:
    """One joint input: the query plus consecutive sentences of one passage."""

    passage_idx: int  # passage the sentences come from
    nodes: list[int]  # node ids (document order) of its sentences
    input_ids: list[int]  # [CLS] q [SEP] s1 [SEP] ... [SEP]
    token_type_ids: list[int]  # 0 for [CLS] q [SEP], 1 for the sentences
    span_ids: list[int]  # per token: 0 = query span, k = k-th sentence (1-based), -1 = none
    truncated: list[bool] = field(default_factory=list)  # per sentence: cut to fit?
    position_ids: list[int] | None = None  # isolated mode: positions restart in every segment


@dataclass
class Tokenized:
    """Tokenised input of one query and its passages (reusable across knob changes)."""

    windows: list[Window]
    num_nodes: int
    query_truncated: bool  # the query was longer than max_query_tokens and was cut
    truncated_nodes: list[int]  # node ids of sentences cut to fit a window


def tokenize(
    tokenizer,
    query: str,
    sentences: list[list[str]],
    max_length: int = 512,
    max_query_tokens: int = 64,
    isolated: bool = False,
) -> Tokenized:
    """Build the joint windows of eq. 1 for every passage.

    Args:
        tokenizer: a Hugging Face tokenizer with cls/sep tokens.
        query: the question.
        sentences: per passage, its sentence texts.
        max_length: tokens per window, special tokens included.
        max_query_tokens: query tokens kept per window.
        isolated: segment layout ``[CLS] q [SEP] [CLS] s_1 [SEP] ...`` with positions restarting
            in every segment and spans covering whole segments (``LocalConfig.isolated_layers``).

    Returns:
        The windows in passage order, with node ids assigned in document order.
    """
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    q = tokenizer(query, add_special_tokens=False)["input_ids"]
    query_truncated = len(q) > max_query_tokens
    q = q[:max_query_tokens]
    head = [cls_id, *q, sep_id]
    flat = [s for sents in sentences for s in sents]
    toks = tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else []
    budget = max_length - len(head)  # sentence tokens + their special tokens
    extra = 2 if isolated else 1  # [CLS] s [SEP] or s [SEP]
    windows: list[Window] = []
    truncated_nodes: list[int] = []
    node = 0
    for p, sents in enumerate(sentences):
        ptoks = toks[node : node + len(sents)]
        for group in window_sentences([len(t) + extra for t in ptoks], budget):
            ids, types = list(head), [0] * len(head)
            spans = [0] * len(head) if isolated else [-1, *([0] * len(q)), -1]
            pos = list(range(len(head)))
            nodes, cut = [], []
            for k, j in enumerate(group, 1):
                t = ptoks[j]
                over = len(t) + extra > budget
                if over:
                    t = t[: budget - extra]
                    truncated_nodes.append(node + j)
                if isolated:
                    ids += [cls_id, *t, sep_id]
                    types += [0] * (len(t) + 2)
                    spans += [k] * (len(t) + 2)
                    pos += list(range(len(t) + 2))
                else:
                    ids += [*t, sep_id]
                    types += [1] * (len(t) + 1)
                    spans += [k] * len(t) + [-1]
                nodes.append(node + j)
                cut.append(over)
            windows.append(Window(p, nodes, ids, types, spans, cut, pos if isolated else None))
        node += len(sents)
    return Tokenized(windows, node, query_truncated, truncated_nodes)


def collate(
    windows: list[Window],
    device: torch.device | str = "cpu",
    pad_multiple: int = 0,
    max_length: int | None = None,
) -> dict[str, Tensor]:
    """Pad windows into a batch and build the span index used for mean pooling.

    Span ids in the batch: window ``w``'s query span is ``w``; the ``k``-th sentence of the batch
    (in window order) is ``W + k``.

    Returns:
        input_ids, attention_mask, token_type_ids ``[B, L]``; span ``[B, L]`` (-1 = not pooled);
        sent_window ``[M]`` (window of each sentence); nodes ``[M]`` (node id of each sentence);
        position_ids ``[B, L]`` for isolated-segment windows only. With ``pad_multiple`` > 1,
        L is rounded up to a multiple of it, but not past ``max_length``.
    """
    B, L = len(windows), max(len(w.input_ids) for w in windows)
    if pad_multiple > 1:  # a few fixed lengths instead of one per batch (padding is never pooled)
        L = max(L, min(-(-L // pad_multiple) * pad_multiple, max_length or 10**9))
    ids = torch.zeros(B, L, dtype=torch.long)
    types = torch.zeros(B, L, dtype=torch.long)
    mask = torch.zeros(B, L, dtype=torch.long)
    span = torch.full((B, L), -1, dtype=torch.long)
    isolated = windows[0].position_ids is not None
    pos = torch.zeros(B, L, dtype=torch.long)
    sent_window, nodes = [], []
    offset = B
    for b, w in enumerate(windows):
        n = len(w.input_ids)
        ids[b, :n] = torch.tensor(w.input_ids)
        types[b, :n] = torch.tensor(w.token_type_ids)
        mask[b, :n] = 1
        if isolated:
            pos[b, :n] = torch.tensor(w.position_ids)
        s = torch.tensor(w.span_ids)
        span[b, :n] = torch.where(s == 0, b, torch.where(s > 0, offset + s - 1, -1))
        offset += len(w.nodes)
        sent_window += [b] * len(w.nodes)
        nodes += w.nodes
    out = {
        "input_ids": ids,
        "attention_mask": mask,
        "token_type_ids": types,
        "span": span,
        "sent_window": torch.tensor(sent_window, dtype=torch.long),
        "nodes": torch.tensor(nodes, dtype=torch.long),
    }
    if isolated:
        out["position_ids"] = pos
    return {k: v.to(device) for k, v in out.items()}


def batches(windows: list[Window], batch_tokens: int, max_windows: int) -> list[list[int]]:
    """Group window indices into length-bucketed batches.

    Windows are sorted by length so each batch pads little; a batch holds at most
    ``max_windows`` windows and ``batch_tokens`` padded tokens (but always at least one window).
    """
    order = sorted(range(len(windows)), key=lambda i: len(windows[i].input_ids))
    out: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        n = len(windows[i].input_ids)
        if cur and (len(cur) + 1 > max_windows or (len(cur) + 1) * n > batch_tokens):
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


PACK_ROW_MULTIPLE = 8  # packed row counts are rounded up to this when pad_multiple > 1


@dataclass
class PackPlan:
    """Where each real window token of an isolated-mode batch runs in the packed layout.

    Tokens are indexed ``0..T-1`` in window order (``b_idx``, ``t_idx``). ``groups`` holds per
    packed group ``(rows, cols, src, long)``: the slot of every token that is computed there, which
    token ``src`` it is, and whether the group holds the segments longer than a row. ``token_group`` / ``token_row`` / ``token_col`` give, for every token,
    the slot whose state it reads (a repeated query reads the first window's).
    """

    b_idx: Tensor  # [T] window of each real token
    t_idx: Tensor  # [T] position of each real token in its window
    seg: Tensor  # [T] segment number of each token (0..S-1)
    # per group: rows [Tg], cols [Tg], src [Tg], and whether it is the long-segment group
    groups: list[tuple[Tensor, Tensor, Tensor, bool]]
    token_group: Tensor  # [T]
    token_row: Tensor  # [T]
    token_col: Tensor  # [T]


def pack_segments(span: Tensor, ids: Tensor, width: int) -> PackPlan:
    """Pack the ``[CLS] x [SEP]`` segments of isolated-mode windows into rows of ``width`` tokens.

    Segments go, in window order, into the current row while they fit (next fit), so a row of
    ``width`` tokens holds several short sentences and block-diagonal attention over it costs
    ``width`` per token rather than the window length. Segments longer than ``width`` form a
    second group, one per row. When every window of the batch starts with the same query
    segment (one question per call), it is packed once and the other windows read its states.

    Args:
        span: ``[B, L]`` span ids from :func:`collate` (-1 = padding); a window's query span id
            is below ``B``, its sentences' at or above.
        ids: ``[B, L]`` token ids (to check that the queries are equal).
        width: tokens per packed row.

    Returns:
        The :class:`PackPlan`.
    """
    B = span.size(0)
    b_idx, t_idx = (span >= 0).nonzero(as_tuple=True)  # row-major: windows, then tokens
    s = span[b_idx, t_idx]  # [T]
    T = s.numel()
    start = torch.ones(T, dtype=torch.bool, device=span.device)
    start[1:] = (s[1:] != s[:-1]) | (b_idx[1:] != b_idx[:-1])
    seg = start.cumsum(0) - 1  # [T] segment number
    first = start.nonzero().squeeze(1)  # [S] first token of each segment
    lengths = torch.diff(first, append=torch.tensor([T], device=span.device))  # [S]
    is_query = s[first] < B  # [S]
    canon = torch.arange(first.numel(), device=span.device)  # segment whose states it reads
    q = is_query.nonzero().squeeze(1)
    if q.numel() > 1 and bool((lengths[q] == lengths[q[0]]).all()):
        at = first[q, None] + torch.arange(int(lengths[q[0]]), device=span.device)  # [Q, n]
        toks = ids[b_idx[at], t_idx[at]]
        if bool((toks == toks[0]).all()):
            canon[q] = q[0]
    # next-fit packing of the computed segments (plain ints: a few hundred segments)
    lens = lengths.tolist()
    todo = (canon == torch.arange(canon.numel(), device=span.device)).tolist()
    group, row, col = [0] * len(lens), [0] * len(lens), [0] * len(lens)
    r, used, r_long = 0, 0, 0
    for i, (n, keep) in enumerate(zip(lens, todo)):
        if not keep:
            continue
        if n > width:
            group[i], row[i], col[i] = 1, r_long, 0
            r_long += 1
            continue
        if used + n > width:
            r, used = r + 1, 0
        group[i], row[i], col[i] = 0, r, used
        used += n
    dev = span.device
    seg_group = torch.tensor(group, device=dev)[canon]  # [S] group each segment reads from
    seg_row = torch.tensor(row, device=dev)[canon]
    seg_col = torch.tensor(col, device=dev)[canon]
    within = torch.arange(T, device=dev) - first[seg]  # [T] offset inside the segment
    token_group, token_row = seg_group[seg], seg_row[seg]
    token_col = seg_col[seg] + within
    computed = canon[seg] == seg  # [T] tokens of segments computed themselves
    groups, index = [], torch.full((2,), -1, dtype=torch.long, device=dev)
    for g in (0, 1):  # keep only the groups that have tokens; renumber them 0, 1, ...
        src = (computed & (token_group == g)).nonzero().squeeze(1)
        if src.numel():
            index[g] = len(groups)
            groups.append((token_row[src], token_col[src], src, g == 1))
    return PackPlan(b_idx, t_idx, seg, groups, index[token_group], token_row, token_col)


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
        for layer in self.joint_layers:
            H = layer(H, joint)
        return H, P, x

    def forward(self, batch: dict[str, Tensor], targets: dict[str, Tensor] | None = None):
        """Score the sentences of a collated batch.

        Args:
            batch: output of :func:`collate`.
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
            from .losses import local_loss

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


class SegmentCache:
    """Isolated-mode cache: per ``[CLS] x [SEP]`` segment (keyed by its token ids), the frozen
    lower-layer states and the prior embedding (``LocalScorer.encode_segments``).

    They do not depend on the query or on the window (the PreTTR idea: precompute the
    query-independent layers of a passage once). Training keeps one cache per run, so every
    sentence goes through the frozen packaged layers once per run instead of once per step.
    Inference uses it two ways:

    * ``LoGReranker.segment_cache``: one cache per call, every segment encoded alone;
    * ``LoGReranker.passage_cache_mb``: one cache kept across calls, bounded in bytes with
      least-recently-used eviction. New passages run in the ordinary block-masked windows and
      their states are *harvested* (:meth:`harvest`); windows whose sentences are all cached skip
      the frozen layers and run only the query segment and the joint layer (:meth:`fill`).

    Cached and uncached forwards are equal up to float rounding (tested).

    Args:
        scorer: the local scorer whose frozen layers produce the states.
        chunk: segments per :meth:`LocalScorer.encode_segments` call.
        max_mb: bound on the stored tensors in MiB (None = unbounded, e.g. one training run).
    """

    def __init__(self, scorer, chunk: int = 64, max_mb: float | None = None):
        self.scorer, self.chunk, self.max_mb = scorer, chunk, max_mb
        self.store: OrderedDict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor]] = OrderedDict()
        self.nbytes = 0
        self.hits = self.misses = 0  # segments served from / added to the store

    @staticmethod
    def segments(windows) -> list[tuple[int, int, int, int]]:
        """``(window b, segment k, start, end)`` of every segment (k = 0 is the query)."""
        segs = []
        for b, w in enumerate(windows):
            start = 0
            for i in range(1, len(w.span_ids) + 1):
                if i == len(w.span_ids) or w.span_ids[i] != w.span_ids[start]:
                    segs.append((b, w.span_ids[start], start, i))
                    start = i
        return segs

    def covers(self, window) -> bool:
        """True if every sentence segment of ``window`` is stored (the query may be new)."""
        return all(
            k == 0 or tuple(window.input_ids[a:e]) in self.store
            for _, k, a, e in self.segments([window])
        )

    def _put(self, key: tuple[int, ...], x: torch.Tensor, e: torch.Tensor) -> None:
        if key in self.store:
            return
        self.store[key] = (x, e)
        self.nbytes += x.numel() * x.element_size() + e.numel() * e.element_size()
        self.misses += 1

    def _shrink(self) -> None:
        """Evict least recently used entries until the store is within ``max_mb``."""
        if self.max_mb is None:
            return
        while self.store and self.nbytes > self.max_mb * 2**20:
            _, (x, e) = self.store.popitem(last=False)
            self.nbytes -= x.numel() * x.element_size() + e.numel() * e.element_size()

    def clear(self) -> None:
        self.store.clear()
        self.nbytes = 0

    def fill(self, batch: dict[str, torch.Tensor], windows) -> None:
        """Add ``batch["lower"]`` [B, L, d] and ``batch["prior_emb"]`` [W + M, d] in place."""
        segs = self.segments(windows)
        keys = [tuple(windows[b].input_ids[a:e]) for b, _, a, e in segs]
        todo = sorted({k for k in keys if k not in self.store}, key=len)
        for i in range(0, len(todo), self.chunk):
            part = todo[i : i + self.chunk]
            for k, v in zip(part, self.scorer.encode_segments([list(t) for t in part])):
                self._put(k, v[0].detach().clone(), v[1].detach().clone())
        entries = {}
        for k in keys:
            entries[k] = self.store[k]
            self.store.move_to_end(k)  # most recently used
        self.hits += len(keys) - len(todo)
        B, L = batch["input_ids"].shape
        first = entries[keys[0]][0]
        lower = torch.zeros(B, L, first.size(-1), dtype=first.dtype, device=first.device)
        prior = torch.zeros(B + batch["nodes"].numel(), first.size(-1), device=first.device)
        offset = B
        for (b, k, a, e), key in zip(segs, keys):
            x, emb = entries[key]
            lower[b, a:e] = x
            prior[b if k == 0 else offset + k - 1] = emb
            if k == len(windows[b].nodes):
                offset += k
        batch["lower"], batch["prior_emb"] = lower, prior
        self._shrink()

    def harvest(self, windows, lower: torch.Tensor, prior_emb: torch.Tensor) -> None:
        """Store the segments of a batch computed the ordinary way.

        Args:
            windows: the batch's windows, in batch order.
            lower: ``[B, L, d]`` states after the isolated layers (``LocalOutput.lower``).
            prior_emb: ``[W + M, d]`` span embeddings (``LocalOutput.prior_emb``).
        """
        offset = len(windows)
        for b, k, a, e in self.segments(windows):
            key = tuple(windows[b].input_ids[a:e])
            if key not in self.store:
                row = b if k == 0 else offset + k - 1
                self._put(
                    key,
                    lower[b, a:e].detach().float().clone(),
                    prior_emb[row].detach().float().clone(),
                )
            else:
                self.store.move_to_end(key)
            if k == len(windows[b].nodes):
                offset += k
        self._shrink()

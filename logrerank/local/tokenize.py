"""Joint query-sentence windows of the local stage (the LoG-Reranker paper, eq. 1).

Each passage is encoded jointly with the query, ``[CLS] q [SEP] s_1 [SEP] ... s_m [SEP]``.
Passages longer than the window are split into windows on sentence boundaries, so every
sentence is scored exactly once, with the query; a single sentence longer than the whole window
is cut and flagged, never silently. :func:`collate` pads windows into a batch with the span
index used for mean pooling, and :func:`batches` groups windows into length-bucketed batches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from ..text.segment import window_sentences


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


def pad_length(length: int, multiple: int, cap: int | None = None) -> int:
    """A batch's padded length: ``length`` rounded up to a multiple of ``multiple`` but not
    past ``cap`` (never below ``length``); ``multiple`` 0 or 1 leaves it unchanged.

    ``pad_length(70, 32, 256) = 96``, ``pad_length(250, 32, 256) = 256``,
    ``pad_length(300, 32, 256) = 300``. Few distinct batch shapes keep a long-running CPU
    process's memory flat (oneDNN keeps a primitive per shape; bench/README.md).
    """
    if multiple <= 1:
        return length
    return max(length, min(-(-length // multiple) * multiple, cap or 10**9))


def pad_encoded(
    enc: dict[str, list[list[int]]],
    width: int,
    pad_id: int = 0,
    left: bool = False,
    device: torch.device | str = "cpu",
) -> dict[str, Tensor]:
    """Pad tokenizer output (``input_ids`` and, where present, ``token_type_ids`` and
    ``attention_mask``, one list per text) to ``width`` tokens: ``[B, width]`` long tensors.
    ``input_ids`` are padded with ``pad_id``, the others with 0; ``left`` pads on the left."""
    out = {}
    for k in ("input_ids", "token_type_ids", "attention_mask"):
        if k not in enc:
            continue
        fill = pad_id if k == "input_ids" else 0
        rows = []
        for row in enc[k]:
            pad = [fill] * (width - len(row))
            rows.append(pad + list(row) if left else list(row) + pad)
        out[k] = torch.tensor(rows, dtype=torch.long, device=device)
    return out


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
    B = len(windows)
    # a few fixed lengths instead of one per batch (padding is never pooled)
    L = pad_length(max(len(w.input_ids) for w in windows), pad_multiple, max_length)
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

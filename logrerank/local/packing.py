"""Packing of isolated-mode segments into fixed-width rows for the frozen layers.

In isolated mode (``LocalConfig.isolated_layers``) every ``[CLS] x [SEP]`` segment attends only
to itself in the frozen lower layers, so segments of many windows can share a row of
``LocalConfig.pack_length`` tokens under block-diagonal attention (see bench/README.md for the
measured effect). :func:`pack_segments` plans where each window token runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

PACK_ROW_MULTIPLE = 8  # packed row counts are rounded up to this when pad_multiple > 1


def first_fit_decreasing(lengths: list[int], width: int) -> list[list[int]]:
    """Bin packing of items of ``lengths`` into rows of ``width`` slots, first fit decreasing.

    Items are taken longest first (ties in input order) and each goes into the first row with
    room for it, or opens a new row. FFD never uses more than ``11/9 OPT + 6/9`` rows (Dosa
    2007). On 20 SciFact pools and rows of 128 tokens it filled 95.5 % of the slots when a
    whole call is packed at once and 83 % batch by batch, where next fit in reading order
    filled 72 % (bench/README.md, "Decisions").

    Args:
        lengths: item sizes, each at most ``width``.
        width: row capacity.

    Returns:
        The rows, each a list of item indices in the order they were placed.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable: ties keep input order
    rows: list[list[int]] = []
    free: list[int] = []  # room left in each row
    for i in order:
        n = lengths[i]
        for r, room in enumerate(free):
            if n <= room:
                rows[r].append(i)
                free[r] -= n
                break
        else:
            rows.append([i])
            free.append(width - n)
    return rows


@dataclass
class PackPlan:
    """Where each real window token of an isolated-mode batch runs in the packed layout.

    Tokens are indexed ``0..T-1`` in window order (``b_idx``, ``t_idx``). ``groups`` holds per
    packed group ``(rows, cols, src, long)``: the slot of every token that is computed there, which
    token ``src`` it is, and whether the group holds the segments longer than a row.
    ``token_group`` / ``token_row`` / ``token_col`` give, for every token, the slot whose state it
    reads (a repeated query reads the first window's).
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

    Segments go into rows by :func:`first_fit_decreasing`, so a row of ``width`` tokens holds
    several short sentences and block-diagonal attention over it costs ``width`` per token
    rather than the window length. Segments longer than ``width`` form a
    second group, one per row. When every window of the batch starts with the same query
    segment (one question per call), it is packed once and the other windows read its states.

    Args:
        span: ``[B, L]`` span ids from :func:`logrerank.local.tokenize.collate` (-1 = padding); a
            window's query span id is below ``B``, its sentences' at or above.
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
    # first-fit-decreasing packing of the computed segments (plain ints: a few hundred)
    lens = lengths.tolist()
    todo = (canon == torch.arange(canon.numel(), device=span.device)).tolist()
    group, row, col = [0] * len(lens), [0] * len(lens), [0] * len(lens)
    long = [i for i, (n, keep) in enumerate(zip(lens, todo)) if keep and n > width]
    for r, i in enumerate(long):  # one row each, in window order
        group[i], row[i] = 1, r
    short = [i for i, (n, keep) in enumerate(zip(lens, todo)) if keep and n <= width]
    for r, members in enumerate(first_fit_decreasing([lens[i] for i in short], width)):
        used = 0
        for j in members:
            i = short[j]
            group[i], row[i], col[i] = 0, r, used
            used += lens[i]
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

"""The int8 quantisation helper (:mod:`logrerank.local.quantize`; ``bench/speed.py --quantize int8``
measures its speed) on the tiny random BERT of conftest.py."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from logrerank.local.quantize import (
    QuantizationError,
    count_linear,
    quantize_cross_encoder,
    quantize_dynamic_int8,
    quantize_log_reranker,
)

QUERY = "Do statins reduce the risk of dementia?"
PASSAGES = [
    {"title": "Cohort", "text": "Statin users had a lower risk of dementia. The effect was small."},
    {"title": "Trial", "text": "No difference was seen in the trial. Adherence was high."},
    "Healthy-user bias may explain the association. Confounding remains possible.",
]


def test_quantize_linear_replaced_and_close():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).eval()
    x = torch.randn(8, 16)
    ref = m(x)
    assert count_linear(m) == (2, 0)
    q = quantize_dynamic_int8(m)
    assert count_linear(q) == (0, 2)
    torch.testing.assert_close(q(x), ref, atol=0.05, rtol=0.05)
    bare = nn.Linear(16, 4).eval()  # a bare Linear is returned as a new, quantised module
    qb = quantize_dynamic_int8(bare)
    assert count_linear(qb) == (0, 1)
    torch.testing.assert_close(qb(x), bare(x), atol=0.05, rtol=0.05)


def test_quantize_refuses_non_cpu_modules():
    with pytest.raises(QuantizationError, match="CPU only"):
        quantize_dynamic_int8(nn.Linear(4, 4, device="meta"))


def test_quantize_log_reranker_close_to_fp32(make_tiny_model):
    fp32, q = make_tiny_model(), make_tiny_model()
    n_before = count_linear(q.local.encoder)[0]
    info = quantize_log_reranker(q)
    assert count_linear(q.local.encoder) == (0, n_before) and n_before > 0
    assert info["quantized_linear"] == n_before
    assert info["float_linear_left"] > 0  # heads and graph model stay float32
    assert q.autocast_dtype is None
    a, b = fp32.encode(QUERY, PASSAGES), q.encode(QUERY, PASSAGES)
    scale = a.h.abs().max()
    assert (a.h - b.h).abs().max() <= 0.05 * scale
    torch.testing.assert_close(b.local_logits, a.local_logits, atol=0.05, rtol=0.05)
    ranking = q.rank_encoded(b)
    assert len(ranking.sentences) == len(a.sentences)


def test_quantize_cross_encoder_close_to_fp32(tiny_dir):
    from logrerank.models.cross_encoder import CrossEncoder

    fp32 = CrossEncoder(str(tiny_dir), device="cpu", precision="fp32")
    q = CrossEncoder(str(tiny_dir), device="cpu", precision="fp32")
    info = quantize_cross_encoder(q)
    assert info["quantized_linear"] > 0 and info["float_linear_left"] == 0
    pairs = [(QUERY, p if isinstance(p, str) else p["text"]) for p in PASSAGES]
    ref, got = fp32.predict(pairs), q.predict(pairs)
    assert max(abs(x - y) for x, y in zip(ref, got)) < 0.05 * max(1.0, *map(abs, ref))

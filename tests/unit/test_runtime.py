"""The ONNX runtime option (``logrerank.runtime``): the ONNX graphs give torch's float32 outputs
for LoG's local stage (packed rows and windows, isolated or fully joint) and for the
cross-encoder, int8 stays close, exports are cached by weights, and a missing onnxruntime falls
back to torch with a visible warning. Tiny random BERTs of ``tests/conftest.py``."""

from __future__ import annotations

import dataclasses
import sys
import warnings

import pytest
import torch

from logrerank.config import LocalConfig
from logrerank.local.scorer import LocalScorer
from logrerank.local.tokenize import collate, tokenize

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

QUERY = "Does aspirin reduce the risk of heart attack?"
PASSAGES = [
    "Aspirin reduced heart attacks by a third. The trial enrolled 5,000 adults. Fine.",
    "Heart attacks are common. No effect was found in the older group of patients at all.",
    "A third passage, with one longer sentence that keeps going for a while to fill a window "
    "and more words after that so that it is cut into several windows of tokens.",
]
ATOL = 1e-4  # float32 torch vs float32 ONNX Runtime (different kernels, same math)


@pytest.fixture(autouse=True)
def onnx_cache(tmp_path_factory, monkeypatch):
    """Exports go to a temp cache shared by the module's tests (as one process would reuse)."""
    root = tmp_path_factory.getbasetemp() / "onnx-cache"
    monkeypatch.setenv("LOGRERANK_CACHE", str(root))
    return root / "onnx"


def _heads_random(scorer: LocalScorer) -> None:
    """Non-zero last local layer, so the logits read the joint states, not only the prior."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        torch.nn.init.normal_(scorer.local_head[-1].weight, std=0.5)


@pytest.fixture
def make_pipeline(tokenizer, tiny_config, make_tiny_encoder):
    """``make_pipeline(isolated=1, max_length=40, pack_length=128, runtime="torch")``: a seeded
    tiny LoG model (2 layers), float32 on CPU."""
    from logrerank.pipeline import LoGReranker

    def make(isolated: int = 1, max_length: int = 40, pack_length: int = 128, runtime="torch"):
        enc = make_tiny_encoder(len(tokenizer), layers=2)
        local = LocalConfig(
            head_hidden=16, role_proj_dim=4, isolated_layers=isolated, pack_length=pack_length
        )
        cfg = tiny_config(None, local=local, runtime=runtime)
        cfg.backbone.max_length, cfg.backbone.max_query_tokens = max_length, 8
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(3)
            model = LoGReranker(cfg, encoder=enc, tokenizer=tokenizer)
        _heads_random(model.local)
        return model

    return make


def _encode(model, runtime: str, query: str = QUERY, passages=PASSAGES):
    model.config.runtime = runtime
    enc = model.encode(query, passages)
    assert model.runtime_in_use == runtime, enc.warnings
    return enc


@pytest.mark.parametrize(
    "isolated,pack_length,max_length",
    [(1, 128, 40), (1, 0, 40), (1, 24, 33), (0, 0, 40), (1, 128, 128)],
    ids=["packed", "windows", "packed-odd", "joint-encoder", "one-window-each"],
)
def test_onnx_local_stage_equals_torch_fp32(make_pipeline, isolated, pack_length, max_length):
    model = make_pipeline(isolated, max_length, pack_length)
    ref = _encode(model, "torch")
    out = _encode(model, "onnx")
    assert len(out.local_logits) == len(ref.local_logits) > 3
    assert ref.local_logits.std() > 0.05  # the heads read the transformer states
    for f in ("local_logits", "h", "role_probs", "intent_by_passage"):
        assert torch.allclose(getattr(ref, f), getattr(out, f), atol=ATOL), f
    if isolated:
        assert torch.allclose(ref.prior_logits, out.prior_logits, atol=ATOL)
    ranking = model.rank_encoded(out)
    assert ranking.info["runtime"] == "onnx" and ranking.info["precision"] == "float32"
    # one passage, and a single short sentence (a one-token-long batch of segments)
    for passages in (PASSAGES[:1], ["Fine."]):
        a, b = _encode(model, "torch", passages=passages), _encode(model, "onnx", passages=passages)
        assert torch.allclose(a.local_logits, b.local_logits, atol=ATOL)


def test_onnx_local_scorer_batches_match_torch(tokenizer, make_tiny_encoder) -> None:
    """The scorer itself: many windows in one batch (two questions), odd lengths, the segment
    cache path (``encode_segments``), and no backend in training mode."""
    from logrerank.runtime.local_runtime import LocalRuntime

    torch.manual_seed(0)
    enc = make_tiny_encoder(len(tokenizer), layers=2)
    cfg = LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1, dropout=0.0)
    scorer = LocalScorer(enc, cfg).eval()
    _heads_random(scorer)
    a = tokenize(tokenizer, QUERY, [p.split(". ") for p in PASSAGES], 29, 8, isolated=True)
    b = tokenize(tokenizer, "Is it safe?", [PASSAGES[0].split(". ")], 29, 8, isolated=True)
    windows = a.windows + b.windows
    assert len(windows) >= 6
    for pack in (0, 16, 128):
        scorer.config = dataclasses.replace(cfg, pack_length=pack)
        with torch.no_grad():
            ref, _ = scorer(collate(windows))
            segs = scorer.encode_segments([w.input_ids[:5] for w in windows[:3]])
            scorer.runtime_backend = LocalRuntime(scorer, "onnx")
            out, _ = scorer(collate(windows))
            segs_rt = scorer.encode_segments([w.input_ids[:5] for w in windows[:3]])
            scorer.runtime_backend = None
        for f in ("logits", "h_s", "h_q", "role_logits", "intent_logits", "prior"):
            assert torch.allclose(getattr(ref, f), getattr(out, f), atol=ATOL), (pack, f)
        for (x, e), (x2, e2) in zip(segs, segs_rt):
            assert torch.allclose(x, x2, atol=ATOL) and torch.allclose(e, e2, atol=ATOL)
    backend = LocalRuntime(scorer, "onnx")
    scorer.runtime_backend = backend
    assert scorer.active_runtime() is backend
    scorer.train()
    assert scorer.active_runtime() is None  # training runs torch (gradients, dropout)
    scorer.eval()
    with torch.no_grad():
        scorer.joint_layers[0].output.dense.bias.add_(1.0)  # weights changed after export
    assert scorer.active_runtime() is None


def test_onnx_int8_stays_close_and_is_smaller(make_pipeline, onnx_cache) -> None:
    model = make_pipeline()
    ref = _encode(model, "torch")
    out = _encode(model, "onnx-int8")
    diff = (ref.local_logits - out.local_logits).abs().max().item()
    assert 0 < diff < 0.25 * ref.local_logits.abs().max().item()
    assert torch.corrcoef(torch.stack([ref.local_logits, out.local_logits]))[0, 1] > 0.98
    files = {p.name: p.stat().st_size for p in onnx_cache.glob("frozen-*/*.onnx")}
    fp32 = files.pop("model.onnx")
    assert files and all(size < fp32 for size in files.values())


def test_export_is_cached_by_weights(make_pipeline, onnx_cache) -> None:
    from logrerank.runtime.local_runtime import LocalRuntime

    model = make_pipeline()
    _encode(model, "onnx")
    first = sorted(p.name for p in onnx_cache.iterdir())
    again = LocalRuntime(model.local, "onnx")
    assert again.export_s == 0.0  # read from the cache, not written again
    with torch.no_grad():
        model.local.joint_layers[0].output.dense.bias.add_(0.5)
    changed = LocalRuntime(model.local, "onnx")
    assert changed.export_s > 0.0
    after = sorted(p.name for p in onnx_cache.iterdir())
    assert set(first) < set(after)  # a new joint folder; the frozen one is shared
    assert len([n for n in after if n.startswith("frozen-")]) == 1
    assert not list(onnx_cache.rglob("*.tmp"))


def _ce_pairs():
    q = "Does aspirin reduce the risk of heart attack?"
    texts = [PASSAGES[0], "Fine.", PASSAGES[2] * 3, PASSAGES[1], "A", PASSAGES[0][:37]]
    return [(q, t) for t in texts] + [("short", "x y z")]


@pytest.mark.parametrize("batch_size", [1, 3, 32])
def test_onnx_cross_encoder_equals_torch_fp32(tiny_ce_dir, batch_size) -> None:
    from logrerank.models.cross_encoder import CrossEncoder

    kw = {"device": "cpu", "precision": "fp32", "batch_size": batch_size, "max_length": 64}
    ref = CrossEncoder(str(tiny_ce_dir), **kw)
    onnx = CrossEncoder(str(tiny_ce_dir), runtime="onnx", **kw)
    assert ref.runtime == "torch" and onnx.runtime == "onnx" and onnx.runtime_warning is None
    a, b = ref.predict(_ce_pairs()), onnx.predict(_ce_pairs())
    assert len(set(a)) == len(a)  # distinct pairs, distinct scores
    assert max(abs(x - y) for x, y in zip(a, b)) < ATOL
    q8 = CrossEncoder(str(tiny_ce_dir), runtime="onnx-int8", **kw).predict(_ce_pairs())
    assert max(abs(x - y) for x, y in zip(a, q8)) < 0.1 * max(abs(x) for x in a)


def test_missing_onnxruntime_falls_back_to_torch_with_a_warning(
    make_pipeline, tiny_ce_dir, monkeypatch
) -> None:
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
    from logrerank.models.cross_encoder import CrossEncoder

    model = make_pipeline()
    ref = model.encode(QUERY, PASSAGES)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    model.config.runtime = "onnx"
    with pytest.warns(RuntimeWarning, match="runtime 'onnx' unavailable.*torch"):
        enc = model.encode(QUERY, PASSAGES)
    assert model.runtime_in_use == "torch"
    assert any("logrerank[onnx]" in w for w in enc.warnings)
    assert torch.equal(enc.local_logits, ref.local_logits)
    ranking = model.rank_encoded(enc)
    assert ranking.info["runtime"] == "torch"
    assert any("unavailable" in w for w in ranking.warnings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per fallback, not per call
        again = model.encode(QUERY, PASSAGES)
    assert any("unavailable" in w for w in again.warnings)

    with pytest.warns(RuntimeWarning, match="runtime 'onnx-int8' unavailable"):
        ce = CrossEncoder(str(tiny_ce_dir), device="cpu", precision="fp32", runtime="onnx-int8")
    assert ce.runtime == "torch" and "not installed" in ce.runtime_warning
    ranked = CrossEncoderRanker(ce).rank(QUERY, PASSAGES)
    assert ce.runtime_warning in ranked.warnings and ranked.info["runtime"] == "torch"


def test_unsupported_backbone_falls_back(make_pipeline) -> None:
    model = make_pipeline()
    model.local.encoder.config.model_type = "roberta"  # what the graph builder refuses
    model.config.runtime = "onnx"
    with pytest.warns(RuntimeWarning, match="BERT encoders only"):
        enc = model.encode(QUERY, PASSAGES)
    assert model.runtime_in_use == "torch" and any("BERT" in w for w in enc.warnings)


def test_runtime_flags_and_config() -> None:
    from logrerank.cli import build_parser
    from logrerank.config import LoGConfig
    from logrerank.jsonconfig import ConfigError

    parser = build_parser()
    for cmd in (
        ["rerank", "-p", "x.json"],
        ["eval", "--benchmark", "scifact"],
        ["app"],
    ):
        assert parser.parse_args([*cmd, "--runtime", "onnx-int8"]).runtime == "onnx-int8"
    with pytest.raises(SystemExit):
        parser.parse_args(["rerank", "-p", "x.json", "--runtime", "tensorrt"])
    with pytest.raises(ConfigError, match="runtime"):
        LoGConfig(runtime="onnx-fp16").validate()
    assert LoGConfig.from_dict(LoGConfig(runtime="onnx").to_dict()).runtime == "onnx"


def test_app_backend_switches_both_models(make_pipeline, tiny_ce_dir) -> None:
    from logrerank.app.state import Backend

    backend = Backend(log=make_pipeline(), cross_encoder_choice=str(tiny_ce_dir))
    backend.use_runtime("onnx")
    assert backend.log.runtime_in_use == "onnx" and backend.cross_encoder.runtime == "onnx"
    assert "onnx runtime" in backend.device_info()[1]
    assert backend.startup_warnings() == []

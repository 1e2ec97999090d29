"""Multi-hop stage 2: the encoding cache (no pickle), the ablation switches of the link and
lexical inputs, and the cross-validation config."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from logrerank.config import GlobalConfig, GraphConfig
from logrerank.data.schema import Example
from logrerank.jsonconfig import ConfigError
from logrerank.pipeline import ABLATIONS
from logrerank.rankers import RANKERS, build_rankers
from logrerank.training.cv import fold_of, grouped_folds
from logrerank.training.log.encode_cache import load_encodings, save_encodings
from logrerank.training.log.graph_cv_config import GraphCVConfig

QUERY = "Who directed the film that starred Mercury Rising actors?"
PASSAGES = [
    {"title": "Mercury Rising", "text": "Mercury Rising is a 1998 film. It was directed by "
     "Harold Becker. The cast included Bruce Willis."},
    {"title": "Harold Becker", "text": "Harold Becker is an American film director. He "
     "directed Mercury Rising and other thrillers."},
    {"title": "Bruce Willis", "text": "Bruce Willis is an actor. Zyxoprene was studied in "
     "a trial of Willis fans."},
    {"title": "", "text": "Zyxoprene lowers blood pressure. Nothing else is known."},
]  # fmt: skip

LINKED = dict(
    graph=GraphConfig(mentions=True, shared_terms=True, term_idf=0.5),
    global_=GlobalConfig(
        hidden=32, heads=4, rel_emb_dim=8, relations=11, lexical_inputs=True,
        lexical_residual=True, passage_pool=True,
    ),
)  # fmt: skip


@pytest.fixture(scope="module")
def linked_model(make_tiny_model):
    model = make_tiny_model(**LINKED)
    with torch.no_grad():  # a non-zero scorer, so the graph inputs change the scores
        for p in model.global_model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return model


def test_encoding_cache_round_trip_without_pickle(tiny_model, tmp_path):
    encs = [tiny_model.encode(QUERY, PASSAGES), tiny_model.encode("Who is Bruce Willis?", PASSAGES)]
    save_encodings(tmp_path / "x-train-all", ["q1", "q2"], encs)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["x-train-all.json", "x-train-all.safetensors"]
    tensors = load_file(str(tmp_path / "x-train-all.safetensors"))  # plain tensors only
    assert set(tensors) >= {"0.h", "1.local_logits", "1.passage_of"}
    side = json.loads((tmp_path / "x-train-all.json").read_text())
    assert side["qids"] == ["q1", "q2"] and side["pools"][0]["query"] == QUERY
    qids, back = load_encodings(tmp_path / "x-train-all")
    assert qids == ["q1", "q2"]
    for a, b in zip(encs, back):
        assert torch.equal(a.h, b.h) and torch.equal(a.passage_of, b.passage_of)
        assert a.sentences == b.sentences and a.passages == b.passages
        ra, rb = tiny_model.rank_encoded(a), tiny_model.rank_encoded(b)
        assert [s.score for s in ra.sentences] == [s.score for s in rb.sentences]


def test_missing_cache_is_empty(tmp_path):
    assert load_encodings(tmp_path / "none") == ([], [])


def test_nolinks_and_nolex_switches(linked_model):
    enc = linked_model.encode(QUERY, PASSAGES)
    full = linked_model.rank_encoded(enc)
    counts = full.info["edge_counts"]
    assert counts["mentions"] > 0 and counts["mentioned-by"] == counts["mentions"]
    assert counts["shared-term"] > 0
    nolinks = linked_model.rank_encoded(enc, **ABLATIONS["log-nolinks"])
    assert all(nolinks.info["edge_counts"][k] == 0 for k in ("mentions", "shared-term"))
    nolex = linked_model.rank_encoded(enc, **ABLATIONS["log-nolex"])
    assert nolex.info["edge_counts"] == counts  # same graph, other node inputs
    scores = [s.score for s in full.sentences]
    assert scores != [s.score for s in nolinks.sentences]
    assert scores != [s.score for s in nolex.sentences]
    # the structured context reads only the paper's relations
    assert full.context is not None


def test_shared_terms_do_not_depend_on_titles(make_tiny_model):
    """Shared-term edges are built whenever graph.shared_terms is on, titled or not."""
    model = make_tiny_model(**dict(LINKED, graph=GraphConfig(shared_terms=True, term_idf=0.5)))
    untitled = [{"title": "", "text": p["text"]} for p in PASSAGES]
    assert model.rerank(QUERY, untitled).info["edge_counts"]["shared-term"] > 0
    assert model.rerank(QUERY, PASSAGES).info["edge_counts"]["shared-term"] > 0
    with pytest.raises(ConfigError, match="term_min_titled"):
        GraphConfig.from_dict({"term_min_titled": 0.5})


def test_rankers_registered():
    for name in ("log-nolinks", "log-nolex"):
        assert name in RANKERS and name in ABLATIONS
    assert set(build_rankers(["log-nolinks", "log-nolex"])) == {"log-nolinks", "log-nolex"}


def test_cv_config_types_and_overrides(tmp_path):
    cfg = GraphCVConfig().override(["folds=3", "seeds=[1,2]"])
    assert cfg.folds == 3 and cfg.seeds == [1, 2]
    with pytest.raises(ConfigError, match="seeds"):
        GraphCVConfig().override(['seeds=["a"]'])
    with pytest.raises(ConfigError, match="folds"):
        GraphCVConfig().override(["folds=1"])
    with pytest.raises(ConfigError):
        GraphCVConfig().override(['aux={"pubmedqa": 3}'])
    with pytest.raises(ConfigError, match="unknown"):
        GraphCVConfig().override(["nope=1"])
    assert GraphCVConfig().digest() == GraphCVConfig().override(["seeds=[7]"]).digest()
    assert GraphCVConfig().digest() != GraphCVConfig().override(["epochs=2"]).digest()


def test_cv_config_is_named_by_its_stage_field():
    from logrerank.training.log.graph_cv_config import is_graph_cv_config

    assert GraphCVConfig().stage == "global-multihop"
    assert is_graph_cv_config(GraphCVConfig().to_dict())
    assert not is_graph_cv_config({"stage": "global", "multihop": {"hotpotqa": 0}})
    with pytest.raises(ConfigError, match="global-multihop"):
        GraphCVConfig().override(["stage=global"])


def test_folds_are_deterministic_and_balanced():
    folds = [fold_of("hotpotqa", str(i), 5) for i in range(500)]
    assert folds == [fold_of("hotpotqa", str(i), 5) for i in range(500)]
    assert min(folds.count(k) for k in range(5)) > 70


def _ex(qid: str, golds: list[str], source: str = "scifact") -> Example:
    return Example(
        qid=qid, query=f"q{qid}", candidates=[], gold_doc_ids=golds, meta={"source": source}
    )


def test_grouped_folds_keep_shared_golds_together():
    # 1 and 3 share doc a; 3 and 5 share doc b (a chain); 2 stands alone; doc a of another
    # source is another passage
    exs = [
        _ex("1", ["a"]),
        _ex("2", ["c"]),
        _ex("3", ["a", "b"]),
        _ex("5", ["b"]),
        _ex("9", ["a"], "citint"),
    ]
    folds = grouped_folds(exs, 5)
    assert (
        folds[0] == folds[2] == folds[3] == fold_of("scifact", "1", 5)
    )  # the group's smallest qid
    assert folds[1] == fold_of("scifact", "2", 5)  # no shared gold: its own fold
    assert folds[4] == fold_of("citint", "9", 5)
    assert GraphCVConfig().fold_groups == "gold"
    with pytest.raises(ConfigError, match="fold_groups"):
        GraphCVConfig().override(["fold_groups=doc"]).check()
    old = GraphCVConfig().override(["fold_groups=question"])
    assert old.digest() != GraphCVConfig().digest()


def test_cache_stem_names_limit_and_offset():
    from logrerank.training.log.encode_cache import cache_stem

    assert cache_stem("d", "citint", "train", 40).name == "citint-train-40"
    assert cache_stem("d", "citint", "train", None).name == "citint-train-all"
    assert cache_stem("d", "citint", "train", 40, 300).name == "citint-train-from300-40"
    cfg = GraphCVConfig().override(['aux_offset={"citint": 300}'])
    assert cfg.aux_offset == {"citint": 300} and cfg.digest() != GraphCVConfig().digest()


def test_scientific_aux_sources_extra_slices_and_score_overrides():
    """Evidence Inference and ScisummNet pools can join the folds (``aux``, ``aux_extra``
    slices); dev stays SciFact / Citation-Integrity; ``model.score`` may be overridden."""
    cfg = GraphCVConfig().override(['aux={"evinf": 80, "scisumm": 30}'])
    assert cfg.aux == {"evinf": 80, "scisumm": 30}
    with pytest.raises(ConfigError, match="dev takes"):
        GraphCVConfig().override(['dev={"evinf": 10}'])
    extra = GraphCVConfig().override(['aux_extra=["scisumm:train:20:5000"]'])
    assert extra.aux_extra == ["scisumm:train:20:5000"]
    assert extra.digest() != GraphCVConfig().digest()
    assert GraphCVConfig().override(["aux_extra=[]"]).digest() == GraphCVConfig().digest()
    for bad in ('["scisumm:train:20"]', '["pubmedqa:train:20:0"]', '["scisumm:train:x:0"]'):
        with pytest.raises(ConfigError):
            GraphCVConfig().override([f"aux_extra={bad}"])
    scored = GraphCVConfig().override(['model={"score": {"passage_weight": 0.5}}'])
    assert scored.model == {"score": {"passage_weight": 0.5}}
    with pytest.raises(ConfigError):  # a removed route field is refused
        GraphCVConfig().override(['model={"score": {"paper_global_weight": 0.5}}'])
    with pytest.raises(ConfigError, match="sections"):
        GraphCVConfig().override(['model={"local": {}}'])


def test_load_sets_with_encode_gives_trainable_tensors(tiny_model, tmp_path, monkeypatch):
    """``encode = true`` encodes what the cache lacks: fresh encodings come out of inference
    mode (``encode_cache.trainable``), so a graph stage can train on them at once."""
    from logrerank.data.schema import Doc
    from logrerank.training.log import encode_cache, graph_cv

    docs = [Doc(f"d{i}", p["title"], [p["text"]]) for i, p in enumerate(PASSAGES)]
    exs = [Example(f"q{i}", q, docs, ["d0"]) for i, q in enumerate([QUERY, "Who is Willis?"])]
    monkeypatch.setattr(encode_cache, "load_examples", lambda *a, **k: list(exs))
    cfg = GraphCVConfig(cache_dir=str(tmp_path), encode=True)
    pools = graph_cv.load_sets(tiny_model, cfg, {"x": 2}, "train")
    assert len(pools) == 2
    h = pools[0][1].h
    assert not h.is_inference()
    w = torch.ones(h.shape[-1], requires_grad=True)
    (h @ w).sum().backward()  # would raise for an inference tensor
    assert w.grad is not None

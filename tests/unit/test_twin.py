"""The cross-encoder twin: passage units (``LocalConfig.unit = "passage"``), their training loss
and the ``cross-encoder-twin`` ranker, on tiny random models (tests/conftest.py)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import torch

from logrerank.baselines.twin import TwinRanker, TwinUnavailableError, load_twin
from logrerank.cli import main
from logrerank.config import ConfigError, LocalConfig
from logrerank.data.schema import Doc, Example
from logrerank.local.units import passage_units, scoring_units, unit_inputs
from logrerank.log_checkpoint import read_meta
from logrerank.rankers import Models, build_rankers
from logrerank.text.segment import passage_spans
from logrerank.training.log import local_stage as ls
from logrerank.training.log import log_config as tc
from logrerank.training.log.unit_loss import passage_logits, unit_step_loss
from logrerank.types import Passage

QUERY = "Does aspirin reduce the risk of heart attack?"
LONG = " ".join(
    f"In cohort {i} aspirin reduced myocardial infarctions by {i}.5% (p<0.0{i}); naïve controls "
    "showed no hyperphosphorylation."
    for i in range(12)
)
PASSAGES = [
    {"title": "Aspirin and the heart", "text": LONG},
    {"title": "", "text": "Statins lower cholesterol. Muscle pain is a side effect."},
    {"title": "Paris", "text": "Paris is mild in spring. Tourists come in May."},
]


def twin_local(**kw) -> LocalConfig:
    """A tiny isolated-mode local config with passage units of 48 tokens."""
    base = dict(head_hidden=16, role_proj_dim=4, isolated_layers=1, dropout=0.0)
    return LocalConfig(**(base | dict(unit="passage", unit_tokens=48, unit_stride=8) | kw))


@pytest.fixture(scope="module")
def twin_backbone(tmp_path_factory, save_tiny_bert) -> Path:
    """A tiny 2-layer backbone folder (isolated mode needs a layer above the isolated one)."""
    return save_tiny_bert(tmp_path_factory.mktemp("twin-bert"), layers=2, seed=7)


@pytest.fixture
def make_twin(tokenizer, tiny_config, twin_backbone):
    """``make_twin(**local)``: a seeded tiny twin (local only) on the 2-layer backbone."""
    from logrerank.local.backbone import load_encoder
    from logrerank.pipeline import LoGReranker

    def make(seed: int = 3, **local):
        cfg = tiny_config(str(twin_backbone), local=twin_local(**local), use_global=False)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return LoGReranker(cfg, encoder=load_encoder(str(twin_backbone)), tokenizer=tokenizer)

    return make


# ------------------------------------------------------------------ units


@pytest.mark.parametrize("unit_tokens", [32, 48, 128])
@pytest.mark.parametrize("title", ["", "Aspirin and the heart", "word " * 60])
def test_units_cover_the_text_with_exact_offsets_and_bounded_length(
    tokenizer, unit_tokens, title
) -> None:
    p = Passage(text=LONG, title=title.strip())
    units = passage_units(p, tokenizer, unit_tokens, 8)
    inputs = unit_inputs(p, tokenizer, units, unit_tokens)
    assert len(units) > 1  # the long passage needs several windows
    covered = [False] * len(LONG)
    for u, x in zip(units, inputs):
        assert LONG[u.start : u.end] == u.text and u.text == u.text.strip()
        assert len(tokenizer(x, add_special_tokens=False)["input_ids"]) <= unit_tokens
        assert x.endswith(u.text)
        if p.title:  # the title (cut to leave room for a body when it is long) leads every unit
            assert x.startswith(p.title[:20]) and x[: len(x) - len(u.text)].endswith(". ")
        for i in range(u.start, u.end):
            covered[i] = True
    assert all(c or LONG[i].isspace() for i, c in enumerate(covered))
    starts = [u.start for u in units]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert all(b.start < a.end for a, b in zip(units, units[1:]))  # consecutive units overlap


def test_short_and_empty_passages(tokenizer) -> None:
    short = Passage(text="Paris is mild.", title="Paris")
    assert [u.text for u in passage_units(short, tokenizer, 48, 8)] == ["Paris is mild."]
    assert unit_inputs(short, tokenizer, passage_units(short, tokenizer, 48, 8), 48) == [
        "Paris. Paris is mild."
    ]
    assert passage_units(Passage(text="   ", title="T"), tokenizer, 48, 8) == []


def test_sentence_mode_keeps_the_sentences(tokenizer) -> None:
    plist = [Passage(**p) for p in PASSAGES]
    spans, texts = scoring_units(plist, LocalConfig(), tokenizer)
    assert spans == [passage_spans(p) for p in plist]
    assert texts == [[s.text for s in sp] for sp in spans]


def test_config_checks_the_unit_switch(tiny_config) -> None:
    with pytest.raises(ConfigError, match="local.unit must be"):
        tiny_config(None, local=LocalConfig(unit="paragraph")).validate()
    with pytest.raises(ConfigError, match="unit_tokens"):  # longer than a window beside the query
        tiny_config(None, local=LocalConfig(unit="passage", unit_tokens=120)).validate()
    with pytest.raises(ConfigError, match="unit_stride"):
        tiny_config(
            None, local=LocalConfig(unit="passage", unit_tokens=48, unit_stride=48)
        ).validate()
    assert tiny_config(None, local=LocalConfig(unit="passage", unit_tokens=48)).validate()


# ------------------------------------------------------------------ scoring


def test_a_passage_scores_as_its_best_unit(make_twin) -> None:
    model = make_twin()
    r = model.rerank(QUERY, PASSAGES)
    assert r.info["use_global"] is False
    per_passage: dict[int, list[float]] = {}
    for s in r.sentences:
        assert PASSAGES[s.passage_idx]["text"][s.start : s.end] == s.text
        per_passage.setdefault(s.passage_idx, []).append(s.score)
    assert len(per_passage[0]) > 1  # the long passage is several units
    for sp in r.passages_ranked:
        assert sp.score == max(per_passage[sp.passage_idx])
    enc = model.encode(QUERY, PASSAGES)  # untrained: every unit logit is the bi-encoder prior
    assert torch.allclose(enc.local_logits, enc.prior_logits)


def test_twin_ranker_is_passage_level(make_twin) -> None:
    model = make_twin()
    ref = model.rerank(QUERY, PASSAGES)
    r = TwinRanker(model).rank(QUERY, PASSAGES)
    assert r.ranker == "cross-encoder-twin" and r.sentences == []
    assert r.passage_order() == ref.passage_order()
    assert [p.score for p in r.passages_ranked] == [p.score for p in ref.passages_ranked]
    top = r.passages_ranked[0]
    text = PASSAGES[top.passage_idx]["text"]
    assert top.extra["units"] >= 1 and 0 <= top.extra["best_unit_start"] < len(text)
    assert r.passages_ranked[[p.passage_idx for p in r.passages_ranked].index(0)].extra["units"] > 1


def test_the_switch_round_trips_through_save_and_load(make_twin, tmp_path) -> None:
    from logrerank.pipeline import LoGReranker

    model = make_twin()
    with torch.no_grad():  # a non-zero head, so the loaded scores are not just the prior
        model.local.local_head[-1].weight.normal_(0, 0.5)
    path = model.save_pretrained(tmp_path / "twin")
    back = LoGReranker.from_pretrained(path)
    assert back.config.local.unit == "passage" and back.config.local.unit_tokens == 48
    assert back.config.use_global is False
    a, b = model.rerank(QUERY, PASSAGES), back.rerank(QUERY, PASSAGES)
    assert [(s.node, s.start, s.end) for s in a.sentences] == [
        (s.node, s.start, s.end) for s in b.sentences
    ]
    assert torch.allclose(
        torch.tensor([s.score for s in a.sentences]), torch.tensor([s.score for s in b.sentences])
    )
    assert load_twin(path).config.local.unit == "passage"


# ------------------------------------------------------------------ training


def _examples(n: int = 4) -> list[Example]:
    out = []
    for q in range(n):
        docs = [
            Doc(
                f"q{q}d{i}",
                f"Title {i}",
                [f"Sentence {j} about topic {i} and {q}." for j in range(8)],
            )
            for i in range(5)
        ]
        gold = f"q{q}d{q % 5}"
        gs = {gold: [1]} if q % 2 == 0 else {}  # sentence labels are not used at unit level
        out.append(Example(f"{q}", f"topic {q % 5} question {q}", docs, [gold], gs, {}, {}))
    return out


def test_passage_logits_pool_units_with_logsumexp() -> None:
    logits = torch.tensor([0.0, 0.0, 2.0])
    out = passage_logits(logits, torch.tensor([0, 0, 2]), 3)
    assert torch.allclose(out[0], torch.log(torch.tensor(2.0))) and out[2] == 2.0
    assert out[1] == float("-inf")  # a passage without units


def test_unit_step_loss_trains_and_falls(make_twin) -> None:
    model = make_twin()
    model.train()
    ex = _examples()[1]
    idx = [0, 1, 2, 3]
    params = model.local.head_parameters() + model.local.joint_parameters()
    opt = torch.optim.Adam(params, lr=1e-2)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = ls.local_step_loss(model, ex, idx, ls.RoleTargets(None), tc.TrainConfig(), None)
        assert torch.isfinite(loss)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0] - 0.05
    assert all(p.grad is None for p in model.local.encoder.parameters())  # frozen packaged layers


def test_unit_step_loss_skips_queries_without_a_cited_passage(make_twin) -> None:
    ex = _examples()[0]
    ex = dataclasses.replace(ex, gold_doc_ids=["elsewhere"])
    assert unit_step_loss(make_twin(), ex, [0, 1], mu=1.0) is None


def test_train_local_trains_a_twin_checkpoint(make_twin, twin_backbone, tmp_path, monkeypatch):
    exs = _examples(6)
    monkeypatch.setattr(ls, "load_train_queries", lambda c, log=None: (exs[:4], exs[4:]))
    model = make_twin().config.to_dict()
    cfg = tc.TrainConfig(
        negatives=2,
        epochs=1,
        grad_accum=1,
        lam=0.0,
        role_tagger=None,
        out=str(tmp_path / "ckpt"),
        state_dir=str(tmp_path / "state"),
        model=model,
        bf16=False,
        heldout_every=2,
    )
    summary = ls.train_local(cfg)
    assert summary["steps"] == 4
    # the held-out curve: before training (the prior), every 2 steps, and at the end
    assert [p["step"] for p in summary["heldout_curve"]] == [0, 2, 4]
    assert summary["heldout_curve"][-1] == {"step": 4} | summary["heldout_local"]
    assert summary["heldout_local"] and all(
        k.startswith("passage_") for k in summary["heldout_local"]
    )  # unit nodes are not the dataset's sentences: no sentence metrics
    twin = load_twin(tmp_path / "ckpt")
    assert twin.config.trained and twin.config.local.unit == "passage"


def test_shipped_twin_config_is_the_local_recipe_with_the_switch() -> None:
    root = Path(__file__).resolve().parents[2] / "configs"
    twin, local = tc.TrainConfig.load(root / "twin.json"), tc.TrainConfig.load(root / "local.json")
    same = ("sources", "max_queries", "negatives", "random_negatives", "epochs", "lr", "lr_heads")
    assert all(getattr(twin, f) == getattr(local, f) for f in same)
    assert twin.lam == 0.0 and twin.model["local"]["unit"] == "passage"
    assert twin.model["local"]["isolated_layers"] == local.model["local"]["isolated_layers"]


# ------------------------------------------------------------------ ranker


def test_ranker_errors_clearly_without_a_checkpoint(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LOGRERANK_CHECKPOINTS", str(tmp_path / "none"))
    ranker = build_rankers(["cross-encoder-twin"], Models())["cross-encoder-twin"]
    assert ranker.level == "passage"
    with pytest.raises(TwinUnavailableError, match="configs/twin.json"):
        ranker.rank(QUERY, PASSAGES)
    with pytest.raises(TwinUnavailableError, match="unavailable"):
        load_twin(tmp_path / "missing")


def test_a_sentence_checkpoint_is_not_a_twin(tiny_ckpt) -> None:
    with pytest.raises(TwinUnavailableError, match="not a cross-encoder-twin"):
        load_twin(tiny_ckpt)


def test_cli_eval_takes_a_twin_folder(make_twin, tmp_path, capsys) -> None:
    claims, corpus = tmp_path / "claims.jsonl", tmp_path / "corpus.jsonl"
    docs = [
        (1, "Aspirin", ["Aspirin lowers heart attack risk.", "It thins the blood."]),
        (2, "Statins", ["Statins lower cholesterol.", "They are common."]),
    ]
    corpus.write_text(
        "\n".join(json.dumps({"doc_id": d, "title": t, "abstract": a}) for d, t, a in docs) + "\n"
    )
    claim = {"id": 1, "claim": "aspirin lowers heart attack risk", "cited_doc_ids": [1]}
    claim["evidence"] = {"1": [{"sentences": [0], "label": "SUPPORT"}]}
    claims.write_text(json.dumps(claim) + "\n")
    argv = ["eval", "--claims", str(claims), "--corpus", str(corpus), "--quiet"]
    argv += ["--rankers", "cross-encoder-twin"]
    assert main([*argv, "--twin", str(tmp_path / "missing")]) == 2
    assert "cross-encoder-twin unavailable" in capsys.readouterr().err
    twin = make_twin().save_pretrained(tmp_path / "twin")
    out = tmp_path / "out"
    assert main([*argv, "--twin", str(twin), "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    s = res["summary"]["cross-encoder-twin"]
    assert s["level"] == "passage" and s["sentence"] is None and s["queries"] == 1
    assert res["meta"]["twin_checkpoint"] == str(twin)


def test_tune_score_on_a_twin_chooses_on_local_passage_scores(make_twin, tmp_path, monkeypatch):
    from logrerank.training.log import score_tuning

    ckpt = Path(make_twin().save_pretrained(tmp_path / "twin"))
    exs = _examples(4)
    monkeypatch.setattr(
        score_tuning,
        "selection_sets",
        lambda n: {"select-scifact": exs[:2], "select-citint": exs[2:]},
    )
    out = score_tuning.tune_score(ckpt, write=True, command="logrerank tune-score")
    assert out["objective"] == score_tuning.OBJECTIVE_LOCAL
    (w, dedup, b) = (
        out["chosen"][k] for k in ("head_weight", "merge_duplicates", "passage_weight")
    )
    # the objective is the mean of the two sets' passage nDCG@10 of the local column
    sets = {
        n: score_tuning.collect(n, e, load_twin(ckpt))
        for n, e in {"select-scifact": exs[:2], "select-citint": exs[2:]}.items()
    }
    sp, cp = (score_tuning.score(sets[n], 2, b, dedup, w)[0] for n in score_tuning.SELECT)
    assert out["objective_value"] == pytest.approx((sp + cp) / 2, abs=1e-3)
    meta = read_meta(ckpt)
    assert meta["training"]["score_selection"]["objective"] == score_tuning.OBJECTIVE_LOCAL


def test_choose_local_only_reads_the_local_column_and_no_sentence_term() -> None:
    from logrerank.training.log.score_tuning import choose

    # two passages, one unit each; the local column (2) puts the gold passage 1 first, the
    # global column (3) puts passage 0 first; the prior (6) equals the local logit (no head)
    row = {"gold": [1], "gold_sent": [[1, 0]], "sent": [[0, 0, 0.0, 5.0, -1, 1, 0.0],
                                                  [1, 0, 3.0, 1.0, -1, 2, 3.0]]}  # fmt: skip
    sets = {"select-scifact": [row], "select-citint": [row]}
    _, val_local = choose(sets, local_only=True)
    assert val_local == pytest.approx(100.0)  # gold first in both sets
    _, val_global = choose(sets)
    # global: the gold passage and the gold sentence are second: nDCG@10 = 1/log2(3) in all three
    assert val_global == pytest.approx(100 / math.log2(3))


def test_choose_lexical_takes_the_best_weight_and_the_smaller_on_ties() -> None:
    from logrerank.config import ScoreConfig
    from logrerank.training.log.score_tuning import LEXICAL_WEIGHTS, choose_lexical

    # the graph puts passage 0 first by 1.0 logit; BM25 prefers the gold passage 1 (1 vs 0)
    row = {"gold": [1], "gold_sent": [], "sent": [[0, 0, 0.0, 1.0, -1, 1, 0.0, 0.0],
                                                  [1, 0, 0.0, 0.0, -1, 2, 0.0, 1.0]]}  # fmt: skip
    best, table = choose_lexical([row], ScoreConfig())
    assert set(table) == set(LEXICAL_WEIGHTS)
    assert table[0.0] == pytest.approx(100 / math.log2(3)) and table[0.5] == table[0.0]
    assert table[1.0] == table[0.0]  # a tie at 1.0 breaks by input order: passage 0 first
    assert best == 2.0 and table[2.0] == pytest.approx(100.0)


# ------------------------------------------------------------------ the twin as a cross-encoder


def test_twin_cross_encoder_scores_pairs_like_the_twin_ranks_passages(make_twin) -> None:
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker, MemoCrossEncoder
    from logrerank.baselines.twin import TwinCrossEncoder
    from logrerank.models.cross_encoder import CrossEncoder

    model = make_twin()
    model.config.score = dataclasses.replace(model.config.score, lexical_weight=1.5)
    ce = TwinCrossEncoder(model)
    assert isinstance(ce, CrossEncoder) and ce.lexical_weight == 0.0 and ce.prior is None
    texts = [p["text"] for p in PASSAGES]
    logits = ce.predict([(QUERY, t) for t in texts])
    # the same order (and the same sigmoid scores) as the twin ranking the untitled texts
    ref = model.rerank(QUERY, texts, use_global=False)
    by_logit = sorted(range(len(texts)), key=lambda i: -logits[i])
    assert by_logit == ref.passage_order()
    for p in ref.passages_ranked:
        assert 1 / (1 + math.exp(-logits[p.passage_idx])) == pytest.approx(p.score, abs=1e-5)
    # pairs of two queries, interleaved, with an empty text: each query is its own pool
    other = "Is Paris mild in spring?"
    pairs = [(QUERY, texts[0]), (other, texts[2]), (QUERY, "  "), (other, texts[1])]
    mixed = ce.predict(pairs)
    assert mixed[0] == pytest.approx(ce.predict([(QUERY, texts[0])])[0], abs=1e-5)
    assert mixed[2] < mixed[0]  # an empty text sinks below its query's others
    assert mixed[1:4:2] == pytest.approx(ce.predict([(other, texts[2]), (other, texts[1])]))
    # the cross-encoder rankers and the app's memo accept it
    r = CrossEncoderRanker(MemoCrossEncoder.wrap(ce)).rank(QUERY, PASSAGES)
    assert len(r.passages_ranked) == 3 and 0.0 <= r.passages_ranked[0].score <= 1.0


def test_app_cross_encoder_choice_lists_bundled_twin_and_folder(
    make_twin, make_tiny_model, tiny_ce_dir, tmp_path, monkeypatch
) -> None:
    """The app's comparison can use the bundled model, the twin or the user's folder; each is
    listed with its badge, and switching re-ranks the baselines without a transformer pass."""
    from logrerank.app import handlers as ui
    from logrerank.app import state

    ckpts = tmp_path / "ckpts"
    monkeypatch.setenv("LOGRERANK_CHECKPOINTS", str(ckpts))
    backend = state.Backend.load(make_tiny_model(), str(tiny_ce_dir))
    menu = dict((v, label) for label, v in backend.choice_options())
    assert list(menu) == ["bundled", "twin", str(tiny_ce_dir)]
    assert menu["twin"].endswith("UNAVAILABLE") and menu[str(tiny_ce_dir)].endswith("trained")
    passages = "\n\n".join(p["text"] for p in PASSAGES)
    first = ui.run_rerank(backend, None, QUERY, passages, None, state.Knobs())
    assert first.ok and first.session.ce_choice == ""
    # the twin picked before one exists: UNAVAILABLE and a warning, never a crash
    res = ui.recompute(backend, first.session, state.Knobs.make(cross_encoder="twin"))
    assert res.ok and "cross-encoder twin" in res.status and "UNAVAILABLE" in res.status
    assert "cross-encoder-sent" not in res.session.baselines
    # a trained twin appears in the bundled place: listed as trained, and the comparison uses it
    twin = make_twin()
    twin.config.trained = True
    twin.save_pretrained(ckpts / "cross-encoder-twin")
    fresh = state.Backend.load(make_tiny_model(), str(tiny_ce_dir))
    assert dict((v, lab) for lab, v in fresh.choice_options())["twin"].endswith("· trained")
    first = ui.run_rerank(fresh, None, QUERY, passages, None, state.Knobs())
    encodes = first.session.encodes
    res = ui.recompute(fresh, first.session, state.Knobs.make(cross_encoder="twin"))
    assert res.ok and res.session.encodes == encodes and res.session.ce_choice == "twin"
    sent = res.session.baselines["cross-encoder-sent"]
    assert "cross-encoder-twin" in fresh.choice("twin").model.source
    assert len(sent.sentences) == len(res.session.ranking.sentences)
    assert "cross-encoder twin" in res.status and "UNAVAILABLE" not in res.status
    back = ui.recompute(fresh, res.session, state.Knobs.make(cross_encoder=""))
    assert back.session.ce_choice == "" and back.ok

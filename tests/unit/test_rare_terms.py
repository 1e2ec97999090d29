"""Shared-term links mean rare in science: the background df table, the full stopword list, and
what a link edge carries (its shared terms, the mentioning sentence)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from collections import Counter
from types import SimpleNamespace

import pytest
import torch

from logrerank.config import GraphConfig
from logrerank.graph.links import SHARED_TERM, annotate_edges, link_edges
from logrerank.resources import checkpoint_dir
from logrerank.text.background_df import background_df, default_table_path, read_table
from logrerank.text.build_df import write_table
from logrerank.text.match import content_stopwords
from logrerank.types import GraphEdge

FILLER = [
    "Zebrafish fins regrow after amputation in juvenile animals.",
    "Quasar spectra reveal intergalactic hydrogen absorption lines.",
    "Volcanic ash layers date the sediment cores from the lake.",
    "Honeybee colonies collapse when varroa mites spread unchecked.",
    "Graphene sheets conduct electrons with almost no resistance.",
    "Permafrost thaw releases methane across the Siberian tundra.",
    "Coral bleaching follows marine heatwaves along the reef.",
    "Tokamak plasma confinement improves with stronger magnets.",
]


def bundled_graph() -> GraphConfig:
    """The graph settings of the bundled LoG model."""
    cfg = json.loads((checkpoint_dir("log-reranker") / "config.json").read_text("utf-8"))
    return GraphConfig.from_dict(cfg["model"]["graph"])


def shared(a: str, b: str, config: GraphConfig) -> list[tuple[int, int]]:
    """Shared-term edges of a 10-passage pool: a, b, then 8 unrelated passages."""
    texts = [a, b, *FILLER]
    le = link_edges(texts, list(range(len(texts))), [""] * len(texts), config)
    keep = le.relation == SHARED_TERM
    return [tuple(p) for p in le.edge_index[:, keep].t().tolist()]


def test_table_ships_and_loads_offline():
    path = default_table_path()
    assert path.is_file() and path.stat().st_size < 2_000_000
    t = background_df()
    assert t.documents > 10_000 and len(t.df) > 10_000
    # common words of scientific prose are frequent; missing tokens count as rare (df = 1)
    for w in ("study", "also", "results", "patients", "data"):
        assert t.idf(w) < 3.0, w
    assert t.idf("zzqxnotaword") == pytest.approx(math.log(t.documents))
    assert t.idf("metformin") > 4.0 and t.idf("glucuronidation") > 4.0


def test_common_words_only_give_no_edge():
    # the scientist's case: two passages share only "more", "than", "also", "study" (and other
    # common words of scientific text); rare inside this pool, but not in science
    a = (
        "This study also found more patients than expected; moreover, the results were "
        "significant and important in different groups."
    )
    b = (
        "More data than before: however, the study also reports results in patients with "
        "significant, important effects across different groups."
    )
    assert shared(a, b, bundled_graph()) == []
    # the same pool with the background criterion off links them (pool rarity alone)
    assert shared(a, b, GraphConfig(shared_terms=True, term_bg_idf=0.0))


@pytest.mark.parametrize("term", ["metformin", "glucuronidation"])
def test_technical_term_gives_an_edge(term):
    a = f"This study also found that {term} lowered the risk."
    b = f"The results: {term} was given to all patients."
    assert set(shared(a, b, bundled_graph())) == {(0, 1), (1, 0)}


def test_two_passage_pool():
    """A pool of two passages: a shared technical term links them, common words do not."""
    cfg = bundled_graph()
    le = link_edges(
        ["Metformin lowered glucose in this study.", "We also gave metformin, more than before."],
        [0, 1],
        ["", ""],
        cfg,
    )
    assert set(map(tuple, le.edge_index[:, le.relation == SHARED_TERM].t().tolist())) == {
        (0, 1),
        (1, 0),
    }
    le = link_edges(
        ["This study also found more effects.", "The study also had more than one effect."],
        [0, 1],
        ["", ""],
        cfg,
    )
    assert int((le.relation == SHARED_TERM).sum()) == 0


def test_stopwords_full_list_and_min_length():
    stop = content_stopwords()
    assert {"more", "than", "between", "during", "the", "and", "however", "moreover"} <= stop
    cfg = GraphConfig(shared_terms=True, term_bg_idf=0.0, term_min_len=4)
    # "p53" is shorter than term_min_len 4: no edge; with 3 it links
    assert shared("Loss of p53 here.", "The p53 gene there.", cfg) == []
    cfg3 = GraphConfig(shared_terms=True, term_bg_idf=0.0, term_min_len=3)
    assert shared("Loss of p53 here.", "The p53 protein there.", cfg3)


def _edges(le) -> list[GraphEdge]:
    names = {8: "mentions", 9: "mentioned-by", 10: "shared-term"}
    return [
        GraphEdge(u, v, names[r], r)
        for (u, v), r in zip(le.edge_index.t().tolist(), le.relation.tolist())
    ]


def test_edges_carry_shared_terms_and_mentioning_sentence():
    texts = [
        "Metformin inhibits codeine glucuronidation in the liver.",
        "We also studied glucuronidation of codeine by Diclofenac in volunteers.",
        "Diclofenac is a drug.",
        *FILLER,
    ]
    pof = [0, 1, 2, *range(3, 3 + len(FILLER))]
    titles = ["", "", "Diclofenac", *[""] * len(FILLER)]
    cfg = GraphConfig(mentions=True, shared_terms=True)
    le = link_edges(texts, pof, titles, cfg)
    enc = SimpleNamespace(
        sentences=[SimpleNamespace(text=t) for t in texts],
        passage_of=torch.tensor(pof),
        passages=[SimpleNamespace(title=t) for t in titles],
    )
    edges = annotate_edges(_edges(le), enc, cfg)
    st = [e for e in edges if e.relation == "shared-term" and (e.source, e.target) == (0, 1)]
    assert len(st) == 1
    # both rare terms, rarest in science first
    assert set(st[0].terms) == {"codeine", "glucuronidation"}
    assert st[0].terms[0] == "glucuronidation"
    m = [e for e in edges if e.relation == "mentions" and e.source == 1]
    assert m and all(e.mention == texts[1] and e.terms == ["diclofenac"] for e in m)
    back = [e for e in edges if e.relation == "mentioned-by" and e.target == 1]
    assert back and all(e.mention == texts[1] for e in back)  # the reverse names the same one
    # a knob change re-annotates from the pool's cached tokens: the same terms, and a changed
    # term criterion is applied, not served from the cache
    again = annotate_edges(_edges(le), enc, cfg)
    assert [(e.source, e.target, e.terms) for e in again] == [
        (e.source, e.target, e.terms) for e in edges
    ]
    strict = annotate_edges(_edges(le), enc, dataclasses.replace(cfg, term_bg_idf=99.0))
    assert all(not e.terms for e in strict if e.relation == "shared-term")


def test_table_round_trip(tmp_path):
    df = Counter({"study": 900, "cells": 300, "metformin": 2, "12": 500, "x": 700})
    out = tmp_path / "t.tsv.gz"
    assert write_table(df, 1000, out, top=10, min_df=3) == 2  # digits, 1 char, df < 3 dropped
    t = read_table(out)
    assert t.documents == 1000 and t.df == {"study": 900, "cells": 300}
    assert t.idf("metformin") == pytest.approx(math.log(1000))
    first = out.read_bytes()
    write_table(df, 1000, out, top=10, min_df=3)
    assert out.read_bytes() == first  # deterministic (gzip mtime 0)
    bad = tmp_path / "bad.tsv.gz"
    with gzip.open(bad, "wt") as f:
        f.write("token\t3\n")
    with pytest.raises(ValueError, match="not a background df table"):
        read_table(bad)


def test_build_df_command_errors(tmp_path, capsys):
    from logrerank.cli import main

    assert main(["build-df", "--data-root", str(tmp_path / "none")]) == 2
    assert "data folder" in capsys.readouterr().err
    assert main(["build-df", "--data-root", str(tmp_path)]) == 2  # no corpus files there
    assert "missing training corpus file" in capsys.readouterr().err


@pytest.mark.data
def test_shipped_table_is_what_build_df_writes(tmp_path):
    """``logrerank build-df`` over the public training corpora rebuilds the shipped table."""
    from logrerank.cli import main
    from logrerank.data.common import default_data_root

    root = default_data_root()
    if not (root / "scifact" / "corpus.jsonl").is_file():
        pytest.skip(f"public data not found at {root} (set LOGRERANK_DATA)")
    out = tmp_path / "df.tsv.gz"
    assert main(["build-df", "--data-root", str(root), "--out", str(out)]) == 0
    assert out.read_bytes() == default_table_path().read_bytes()

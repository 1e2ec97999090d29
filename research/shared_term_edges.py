"""Shared-term edges per pool under the rarity criteria of ``logrerank/links.py``.

Counts the shared-term edges (both directions) of the HotpotQA and MuSiQue train pools (the
question's fixed paragraphs, segmented as the pipeline does) under: the earlier criterion
(Lucene's 33 stopwords, rarity in the pool only; as today, two passages always count as few,
which changes one 4-passage HotpotQA pool), the full stopword list alone
(``term_bg_idf = 0``), and background-idf thresholds; then the terms the current default drops
that the earlier criterion linked by, most frequent first. Needs only the texts (no model).

    python research/shared_term_edges.py --sets hotpotqa musique
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from collections.abc import Iterator

from logrerank import links
from logrerank.background_df import background_df
from logrerank.config import GraphConfig
from logrerank.data.common import default_data_root
from logrerank.data.hotpotqa import read_hotpotqa
from logrerank.data.musique import read_musique
from logrerank.segment import passage_spans
from logrerank.text_match import normalize_tokens, stopwords
from logrerank.types import Passage

FILES = {
    "hotpotqa": ("hotpotqa/hotpotqa_train.json", read_hotpotqa),
    "musique": ("musique/musique_train.json", read_musique),
}


def pools(name: str) -> Iterator[tuple[list[str], list[int], list[str]]]:
    """(sentence texts, passage of each, titles) per question of a train sample."""
    path, read = FILES[name]
    for ex in read(default_data_root() / path):
        texts, pof, titles = [], [], []
        for i, d in enumerate(ex.candidates):
            p = Passage(text=" ".join(d.sentences) if d.sentences else d.text, title=d.title)
            for sp in passage_spans(p):
                texts.append(sp.text)
                pof.append(i)
            titles.append(d.title)
        yield texts, pof, titles


def shared_edges(pool, cfg: GraphConfig) -> int:
    le = links.link_edges(*pool, cfg)
    return int((le.relation == links.SHARED_TERM).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(FILES), choices=list(FILES))
    ap.add_argument("--thresholds", nargs="+", type=float, default=[0.0, 2.5, 3.0, 4.0])
    args = ap.parse_args()
    default = GraphConfig().term_bg_idf
    full = links.content_stopwords
    for name in args.sets:
        ps = list(pools(name))
        print(f"## {name} train ({len(ps)} pools): shared-term edges per pool (mean)")
        links.content_stopwords = stopwords  # the earlier criterion: Lucene's list, pool only
        old = [shared_edges(p, GraphConfig(shared_terms=True, term_bg_idf=0.0)) for p in ps]
        links.content_stopwords = full
        print(f"earlier (33 stopwords, pool rarity only): {statistics.mean(old):.1f}")
        for bg in args.thresholds:
            n = [shared_edges(p, GraphConfig(shared_terms=True, term_bg_idf=bg)) for p in ps]
            mark = " (default)" if bg == default else ""
            print(f"full stopwords, term_bg_idf {bg:g}{mark}: {statistics.mean(n):.1f}")
        dropped: Counter[str] = Counter()
        for texts, pof, _ in ps:
            toks = [normalize_tokens(t) for t in texts]
            links.content_stopwords = stopwords
            before = links.rare_vocabulary([links.content_terms(t) for t in toks], pof, 1.5, 0.0)
            links.content_stopwords = full
            now = links.rare_vocabulary([links.content_terms(t) for t in toks], pof, 1.5, default)
            dropped.update(set(before) - set(now))
        table = background_df()
        top = ", ".join(f"{w} {n} ({table.idf(w):.1f})" for w, n in dropped.most_common(20))
        print(f"terms no longer linking (pools, background idf): {top}\n")


if __name__ == "__main__":
    main()

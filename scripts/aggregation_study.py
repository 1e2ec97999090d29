"""Passage-context study: does adding a passage term to each sentence's score help?

For every query the LoG model encodes the pool once; the script stores each sentence's local
logit, global logit (the GAT output) and the zero-shot bi-encoder cosine, then scores

    s'_ij = s_ij + beta * mean_k s_ik        (k over the sentences of passage i)

for a grid of beta, at passage level (rank of the best sentence, the protocol of DESIGN §5) and
sentence level. beta is chosen on TRAIN queries the model never trained on (SciFact train
held-out slice + Citation-Integrity train claims past the first 300, which stage 1 did not use),
and the chosen value is then reported on the dev sets.

    python scripts/aggregation_study.py --out runs/agg          # encode + cache + report
    python scripts/aggregation_study.py --out runs/agg --report # report from the cache only
"""

from __future__ import annotations

import argparse
import json
import math
import zlib
from pathlib import Path

import torch

BETAS = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0]


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def collect(name: str, examples, model, bi, path: Path) -> list[dict]:
    from logrerank.evaluate import example_passages

    if path.exists():
        return json.loads(path.read_text())
    rows = []
    for i, ex in enumerate(examples):
        ps = example_passages(ex)
        enc = model.encode(ex.query, ps)
        r = model.rank_encoded(enc)
        b = {}
        if bi is not None:
            ranked = bi.rank(ex.query, ps).sentences
            b = {(s.passage_idx, s.sent_idx): s.extra["cosine"] for s in ranked}
        rows.append(
            {
                "qid": ex.qid,
                "gold": [
                    j for j, d in enumerate(ex.candidates) if d.doc_id in set(ex.gold_doc_ids)
                ],
                "gold_sent": [
                    [j, k]
                    for j, d in enumerate(ex.candidates)
                    for k in ex.gold_sentences.get(d.doc_id, [])
                ],
                "sent": [
                    [
                        s.passage_idx,
                        s.sent_idx,
                        float(enc.local_logits[s.node]),
                        _logit(s.global_score),
                        b.get((s.passage_idx, s.sent_idx), -1.0),
                        zlib.crc32(" ".join(s.text.split()).encode()),  # duplicate id
                    ]
                    for s in sorted(r.sentences, key=lambda s: s.node)
                ],
            }
        )
        if (i + 1) % 25 == 0:
            print(f"{name}: {i + 1}/{len(examples)}", flush=True)
    path.write_text(json.dumps(rows))
    return rows


def ndcg10(ranked: list, gold: set) -> float:
    dcg = sum(1 / math.log2(r + 2) for r, x in enumerate(ranked[:10]) if x in gold)
    ideal = sum(1 / math.log2(r + 2) for r in range(min(10, len(gold))))
    return dcg / ideal if ideal else 0.0


def score(
    rows: list[dict], col: int, beta: float, dedup: bool = False
) -> tuple[float, float | None]:
    """Mean passage and sentence nDCG@10 (percent) with the passage term ``beta``.

    ``dedup``: every copy of a sentence text repeated in the pool gets the mean score of its
    copies first (one score per distinct text; ties then go to pool order).
    """
    pn, sn = [], []
    for q in rows:
        s = torch.tensor([x[col] for x in q["sent"]], dtype=torch.float64)
        if dedup:
            ids = torch.unique(torch.tensor([x[5] for x in q["sent"]]), return_inverse=True)[1]
            sums = torch.zeros(int(ids.max()) + 1, dtype=torch.float64).index_add(0, ids, s)
            s = (sums / torch.bincount(ids).to(torch.float64))[ids]
        p = torch.tensor([x[0] for x in q["sent"]])
        P = int(p.max()) + 1
        mean = torch.zeros(P, dtype=torch.float64).index_add(0, p, s) / torch.bincount(
            p, minlength=P
        ).clamp_min(1)
        s2 = s + beta * mean[p]
        order = sorted(range(len(s2)), key=lambda i: (-float(s2[i]), i))  # ties: input order
        seen, porder = set(), []
        for i in order:
            if q["sent"][i][0] not in seen:
                seen.add(q["sent"][i][0])
                porder.append(q["sent"][i][0])
        pn.append(ndcg10(porder, set(q["gold"])))
        if q["gold_sent"]:
            gs = {tuple(x) for x in q["gold_sent"]}
            sn.append(ndcg10([tuple(q["sent"][i][:2]) for i in order], gs))
    return 100 * sum(pn) / len(pn), (100 * sum(sn) / len(sn) if sn else None)


def report(sets: dict[str, list[dict]]) -> str:
    lines = [
        "| set | scores | " + " | ".join(f"beta={b}" for b in BETAS) + " |",
        "|---|---|" + "---|" * len(BETAS),
    ]
    for name, rows in sets.items():
        for col, label, dedup in (
            (2, "local", False),
            (2, "local, dedup", True),
            (3, "global", False),
            (3, "global, dedup", True),
            (4, "bi-encoder", False),
        ):
            if all(x[4] == -1.0 for q in rows for x in q["sent"]) and col == 4:
                continue
            cells = []
            for b in BETAS:
                p, s = score(rows, col, b, dedup)
                cells.append(f"{p:.1f}" + (f" / {s:.1f}" if s is not None else ""))
            lines.append(f"| {name} ({len(rows)}) | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description="passage-context study (see module docstring)")
    ap.add_argument("--out", default="runs/agg")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--report", action="store_true", help="report from the cache only")
    ap.add_argument("--citint-train", type=int, default=100, help="unused CitInt train claims")
    ap.add_argument("--bi", action="store_true", help="also store the bi-encoder cosine (slower)")
    ap.add_argument("--sets", default="select-scifact,select-citint,scifact-dev,citint-dev")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = args.sets.split(",")
    sets = {}
    if args.report:
        for n in wanted:
            if (out / f"{n}.json").exists():
                sets[n] = json.loads((out / f"{n}.json").read_text())
    else:
        from logrerank.baselines.bi_encoder import BiEncoder, BiEncoderRanker
        from logrerank.data.pools import load_benchmark
        from logrerank.pipeline import LoGReranker
        from logrerank.train import held_out

        model = LoGReranker.from_pretrained(args.checkpoint)
        bi = BiEncoderRanker("sentence", BiEncoder()) if args.bi else None
        for n in wanted:
            if n == "select-scifact":
                exs, _ = load_benchmark("scifact", split="train")
                exs = [e for e in exs if held_out(f"scifact:{e.qid}", 0.1)]
            elif n == "select-citint":
                used, _ = load_benchmark("citint", split="train", limit=300)  # stage 1's claims
                seen = {e.qid for e in used}
                exs, _ = load_benchmark("citint", split="train", limit=300 + args.citint_train)
                exs = [e for e in exs if e.qid not in seen]
            elif n == "scifact-dev":
                exs, _ = load_benchmark("scifact")
            elif n == "citint-dev":
                exs, _ = load_benchmark("citint")
            else:
                raise SystemExit(f"unknown set {n}")
            sets[n] = collect(n, exs, model, bi, out / f"{n}.json")
    text = report(sets)
    print(text)
    (out / "report.md").write_text(text + "\n")


if __name__ == "__main__":
    main()

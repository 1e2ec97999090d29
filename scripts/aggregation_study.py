"""Score-adjustment study: choose ``LoGConfig.score`` (logrerank/scoring.py) on train queries.

For every query the LoG model encodes the pool once; the script caches each sentence's local
logit, global logit (GAT output), bi-encoder prior logit and a duplicate-text id, then scores a
grid of the three adjustments with the library's own ``adjust_logits``:

    head weight w      l' = l - (1 - w) * (l_local - prior)     (WiSE-FT-style shrinkage)
    merge_duplicates   one score per distinct sentence text in the pool (mean of its copies)
    passage weight b   l'_ij = l_ij + b * mean_k l_ik

at passage level (rank of the best sentence, DESIGN §5) and sentence level. The setting is
chosen on TRAIN queries the model never trained on (the SciFact train held-out slice, and
Citation-Integrity train claims past the first 300, which stage 1 did not use), by an objective
fixed in :func:`report`, and then reported on the dev sets.

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
    from logrerank.evaluation.evaluate import example_passages

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
                        float(enc.prior_logits[s.node]),  # bi-encoder prior logit
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


def passage_order(q: dict, scores: torch.Tensor) -> tuple[list[int], list[int]]:
    """(passage order by best sentence, sentence order); ties go to input order."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    seen, porder = set(), []
    for i in order:
        if q["sent"][i][0] not in seen:
            seen.add(q["sent"][i][0])
            porder.append(q["sent"][i][0])
    return porder, order


def score(
    rows: list[dict], col: int, beta: float = 0.0, dedup: bool = False, w: float = 1.0
) -> tuple[float, float | None]:
    """Mean passage and sentence nDCG@10 (percent) of column ``col`` (2 local, 3 global, 6 prior)
    after :func:`logrerank.scoring.adjust_logits` with ``dedup``, ``beta`` and head weight ``w``
    (col -1 = the first-pass order)."""
    from logrerank.scoring import adjust_logits

    pn, sn = [], []
    for q in rows:
        if col == -1:
            porder = sorted({x[0] for x in q["sent"]})
            pn.append(ndcg10(porder, set(q["gold"])))
            continue
        sent = q["sent"]
        logits = torch.tensor([x[col] for x in sent], dtype=torch.float64)
        head = torch.tensor([x[2] - x[6] for x in sent], dtype=torch.float64)
        s = adjust_logits(
            logits,
            torch.tensor([x[0] for x in sent]),
            [str(x[5]) for x in sent],
            merge_duplicates=dedup,
            passage_weight=beta,
            head=head if col in (2, 3) else None,
            head_weight=w,
        )
        porder, order = passage_order(q, s)
        pn.append(ndcg10(porder, set(q["gold"])))
        if q["gold_sent"]:
            gs = {tuple(x) for x in q["gold_sent"]}
            sn.append(ndcg10([tuple(sent[i][:2]) for i in order], gs))
    return 100 * sum(pn) / len(pn), (100 * sum(sn) / len(sn) if sn else None)


WEIGHTS = [1.0, 0.75, 0.5, 0.25, 0.0]
SELECT = ("select-scifact", "select-citint")


def _cell(p: float, s: float | None) -> str:
    return f"{p:.1f}" + (f" / {s:.1f}" if s is not None else "")


def choose(sets: dict[str, list[dict]]) -> tuple[tuple[float, bool, float], float]:
    """The (head_weight, merge_duplicates, passage_weight) maximising the selection objective
    (see :func:`report`), and its value. Ties keep the first in grid order."""
    best, best_val = (1.0, False, 0.0), -1.0
    for w in WEIGHTS:
        for dedup in (False, True):
            for b in BETAS:
                sp, ss = score(sets["select-scifact"], 3, b, dedup, w)
                cp, _ = score(sets["select-citint"], 3, b, dedup, w)
                val = (sp + ss + cp) / 3
                if val > best_val + 1e-9:
                    best, best_val = (w, dedup, b), val
    return best, best_val


def write_choice(sets: dict[str, list[dict]], checkpoint: Path, command: str) -> dict:
    """Store the chosen setting in ``checkpoint/config.json`` (``model.score``) with how it was
    chosen (``training.score_selection``)."""
    (w, dedup, b), val = choose(sets)
    path = checkpoint / "config.json"
    meta = json.loads(path.read_text())
    chosen = {"merge_duplicates": dedup, "passage_weight": b, "head_weight": w}
    meta["model"]["score"] = chosen
    meta.setdefault("training", {})["score_selection"] = {
        "chosen": chosen,
        "objective": "mean of SciFact-select P-nDCG@10, S-nDCG@10 and CitInt-select P-nDCG@10",
        "objective_value": round(val, 3),
        "selection_sets": {n: len(sets[n]) for n in SELECT},
        "grid": {
            "head_weight": WEIGHTS,
            "merge_duplicates": [False, True],
            "passage_weight": BETAS,
        },
        "command": command,
    }
    path.write_text(json.dumps(meta, indent=2) + "\n")
    return chosen


def report(sets: dict[str, list[dict]]) -> str:
    """Tables per set, then the setting chosen on the selection sets and its dev figures.

    Selection objective, fixed before looking: the mean of SciFact-select passage nDCG@10,
    SciFact-select sentence nDCG@10 and CitInt-select passage nDCG@10 (the three figures the bar
    is about), LoG full (global) scores.
    """
    lines = []
    for name, rows in sets.items():
        lines += [
            f"### {name} ({len(rows)} queries), P-nDCG@10 / S-nDCG@10",
            "",
            "| scores | w | dedup | " + " | ".join(f"beta={b}" for b in BETAS) + " |",
            "|---|---|---|" + "---|" * len(BETAS),
        ]
        lines.append(f"| first-pass | | | {_cell(*score(rows, -1))} |")
        lines.append(f"| prior (bi-encoder cosine) | | | {_cell(*score(rows, 6))} |")
        for col, label in ((2, "local"), (3, "global")):
            for w in WEIGHTS:
                for dedup in (False, True):
                    if not dedup and w != 1.0:
                        continue
                    cells = [_cell(*score(rows, col, b, dedup, w)) for b in BETAS]
                    lines.append(f"| {label} | {w} | {dedup} | " + " | ".join(cells) + " |")
        lines.append("")
    if all(n in sets for n in SELECT):
        (w, dedup, b), best_val = choose(sets)
        lines.append(
            f"Chosen on the selection sets (mean of the three figures {best_val:.2f}): "
            f"head_weight={w}, merge_duplicates={dedup}, passage_weight={b}"
        )
        for name, rows in sets.items():
            for col, label in ((3, "log"), (2, "log-local")):
                lines.append(f"- {name}: {label} {_cell(*score(rows, col, b, dedup, w))}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description="passage-context study (see module docstring)")
    ap.add_argument("--out", default="runs/agg")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--report", action="store_true", help="report from the cache only")
    ap.add_argument("--citint-train", type=int, default=100, help="unused CitInt train claims")
    ap.add_argument("--write", default=None, help="store the chosen setting in this checkpoint")
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
        from logrerank.training.stages import held_out

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
    if args.write:
        import sys

        chosen = write_choice(sets, Path(args.write), " ".join(["python", *sys.argv]))
        print(f"wrote score config {chosen} to {args.write}/config.json")


if __name__ == "__main__":
    main()

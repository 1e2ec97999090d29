"""bf16 Linear weights cast once vs autocast's per-batch cast (bench/README.md).

    python research/bench/bf16_weights.py

Encodes 11 SciFact dev pools three times in one process: as shipped (autocast casts every fp32
Linear weight on every batch), with the frozen encoder's Linear layers cast to bf16 once, and
with the joint layers cast too. Prints the median and total encode time of each pass and the
largest logit difference (0.0 expected: autocast rounds fp32 -> bf16 the same way). The model is
modified in place for the measurement only; the library does not do this (see bench/README.md).
"""

from __future__ import annotations

import time

import torch

from logrerank.evaluation.speed_inputs import scifact_pools


def main() -> None:
    from logrerank.pipeline import LoGReranker

    torch.set_num_threads(2)
    pools = scifact_pools(12)
    model = LoGReranker.from_pretrained()
    model.rerank(*pools[0])

    def run(tag: str) -> torch.Tensor:
        ts, outs = [], []
        for q, p in pools[1:]:
            t = time.perf_counter()
            enc = model.encode(q, p)
            ts.append(time.perf_counter() - t)
            outs.append(enc.local_logits)
        ts.sort()
        print(f"{tag}: median encode {ts[len(ts) // 2]:.3f} s, sum {sum(ts):.2f} s", flush=True)
        return torch.cat(outs)

    a = run("autocast casts weights")
    b = run("autocast casts weights (again)")
    for m in model.local.encoder.modules():
        if isinstance(m, torch.nn.Linear):
            m.to(torch.bfloat16)
    c = run("frozen encoder Linear weights cast once")
    for m in model.local.joint_layers.modules():
        if isinstance(m, torch.nn.Linear):
            m.to(torch.bfloat16)
    d = run("+ joint layers cast once")
    print("max |diff|:", *((a - x).abs().max().item() for x in (b, c, d)))


if __name__ == "__main__":
    main()

"""Copy the inference settings of one checkpoint (``score`` section, ``local.batch_tokens``)
into another checkpoint's config.json, e.g. after training stage 2 for another seed:

    python research/copy_score.py logrerank/checkpoints/log-reranker runs/log-seed17
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(src: str, dst: str) -> None:
    s = json.loads((Path(src) / "config.json").read_text())
    path = Path(dst) / "config.json"
    d = json.loads(path.read_text())
    d["model"]["score"] = s["model"]["score"]
    d["model"]["local"]["batch_tokens"] = s["model"]["local"]["batch_tokens"]
    path.write_text(json.dumps(d, indent=1))
    print(f"{dst}: score {d['model']['score']}, batch_tokens {d['model']['local']['batch_tokens']}")


if __name__ == "__main__":
    main(*sys.argv[1:3])

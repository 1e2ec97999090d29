"""Training of the question-intent classifier (``logrerank train intent``).

1. Weakly labelled texts from the training corpora (:mod:`logrerank.training.intent.intent_data`):
   questions labelled by the role tagger's roles of their gold sentences (and, when configured,
   the role corpora's labelled sentences; the bundled run leaves them out because the tagger
   that makes the features was trained on them). Cached per source in ``<run_dir>/texts/``
   (git-ignored).
2. Their features (:class:`~logrerank.models.question_intent.TaggerFeatures`: the role
   tagger's log-probabilities of the text read alone), cached per source in
   ``<run_dir>/features-<hash of its texts>.safetensors``.
3. The head (:class:`~logrerank.models.question_intent.IntentHead`; the bundled one is linear,
   3 -> 3, started at the identity) trained with a soft cross-entropy; every source carries the
   same total weight (``sentence_weight`` for the sentence sources), and the three roles can be
   balanced. The epoch (0 = the initial head) with the best balanced accuracy on the ``val``
   texts (``select_on``: the question sources' validation questions, or the ``train_on``
   sources' validation parts) is kept.
4. Accuracy per source on the ``heldout`` part (argmax of the prediction against argmax of the
   weak target; never used for a choice), for the kept head and the initial one, goes into the
   checkpoint's ``config.json``.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from ...config import ROLE_NAMES
from ...jsonconfig import ConfigError, JsonConfig
from .intent_data import (
    LABELLED_QUESTION_SOURCES,
    QUESTION_SOURCES,
    SENTENCE_SOURCES,
    SOURCES,
    IntentText,
)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


SELECT_ON = ("questions", "train_on", "handwritten", "mixed")


def handwritten_val() -> list[IntentText]:
    """The hand-written validation questions (``handwritten_val.json``, package data; none comes
    from a dataset), each with a one-hot label, source ``"handwritten"``, part ``"val"``."""
    from importlib.resources import files

    raw = json.loads(files(__package__).joinpath("handwritten_val.json").read_text("utf-8"))
    return [
        IntentText(q, [float(r == kind) for r in ROLE_NAMES], "handwritten", "val")
        for q, kind in raw["questions"]
    ]


@dataclass
class IntentTrainConfig(JsonConfig):
    sources: list[str] = field(default_factory=lambda: list(SOURCES))  # see intent_data
    # the sources whose train parts train the head and whose val parts pick the epoch; the
    # other sources are only evaluated (their held-out part)
    train_on: list[str] = field(default_factory=lambda: list(SENTENCE_SOURCES))
    # which val texts pick the epoch: "questions" (the question sources' val questions, weak
    # labels), "train_on" (the val parts of the train_on sources) or "handwritten" (the 30
    # hand-written, hand-labelled questions of handwritten_val.json, 10 per kind) or "mixed"
    # (the mean of the balanced accuracies on the hand-written ones and on the train_on val parts)
    select_on: str = "questions"
    # features of the question: "tagger-logprobs" (3 numbers) or "tagger-states" (the role
    # tagger's sentence vector and its 3 log-probabilities); see models.question_intent
    feature_set: str = "tagger-logprobs"
    # total loss weight of a source (default 1; sentence sources: sentence_weight)
    source_weight: dict[str, float] = field(default_factory=dict)
    val_fraction: float = 0.1  # questions per source used to pick the epoch
    heldout_fraction: float = 0.2  # questions per source held out (reported only)
    # keep about this many of every 1000 examples of a source (the large ones); absent = all
    per_mille: dict[str, int] = field(default_factory=lambda: {"scisumm": 150})
    sentence_per_mille: int = 300  # same for CSAbstruct / NICTA sentences
    sentence_weight: float = 1.0  # total loss weight of each sentence source (questions: 1)
    balance_classes: bool = True  # reweight so that the three roles weigh the same in total
    hidden: int = 0  # head hidden width; 0 = linear (started at the identity on 3 features)
    dropout: float = 0.1
    lr: float = 1e-3  # AdamW
    weight_decay: float = 0.01
    epochs: int = 30
    batch_size: int = 64
    seed: int = 13
    threads: int = 1  # torch CPU threads; the machine is shared
    data_root: str | None = None  # public data; None = data.common.default_data_root()
    run_dir: str = "runs/intent"  # cached texts and embeddings, metrics.json
    out_dir: str | None = "runs/question-intent"  # checkpoint folder; None = the bundled one

    LABEL = "question-intent training config"
    KEY_PREFIX = "intent."

    def check(self) -> IntentTrainConfig:
        """Check ranges and source names; returns self.

        Raises:
            ConfigError: a value is out of range or a source unknown.
        """
        if not self.sources or any(s not in SOURCES for s in self.sources):
            raise ConfigError(f"sources must be a non-empty subset of {list(SOURCES)}")
        if not self.train_on or any(s not in self.sources for s in self.train_on):
            raise ConfigError("train_on must be a non-empty subset of sources")
        from ...models.question_intent import FEATURE_SETS

        if self.feature_set not in FEATURE_SETS:
            raise ConfigError(f"feature_set must be one of {sorted(FEATURE_SETS)}")
        if any(s not in SOURCES or w < 0 for s, w in self.source_weight.items()):
            raise ConfigError("source_weight: known sources, weights >= 0")
        if self.select_on not in SELECT_ON:
            raise ConfigError(f"select_on must be one of {list(SELECT_ON)}, not {self.select_on!r}")
        if not (0 <= self.val_fraction < 1 and 0 <= self.heldout_fraction < 1):
            raise ConfigError("val_fraction and heldout_fraction must be in [0, 1)")
        if self.val_fraction + self.heldout_fraction >= 1:
            raise ConfigError("val_fraction + heldout_fraction must be below 1")
        if self.hidden < 0 or self.epochs < 1 or self.batch_size < 1 or self.threads < 1:
            raise ConfigError("hidden >= 0, epochs >= 1, batch_size >= 1, threads >= 1")
        return self


def build_texts(cfg: IntentTrainConfig, log=_log) -> list[IntentText]:
    """The weakly labelled texts of every configured source (cached per source in
    ``<run_dir>/texts/<source>.json``, keyed by the settings that change them)."""
    from ...data.common import default_data_root
    from .intent_data import labelled_question_texts, question_texts, sentence_texts

    root = Path(cfg.data_root) if cfg.data_root else default_data_root()
    texts: list[IntentText] = []
    tagger = None
    for src in cfg.sources:
        cache = Path(cfg.run_dir) / "texts" / f"{src}.json"
        if src in SENTENCE_SOURCES:
            key = [str(root), cfg.sentence_per_mille]
        elif src in LABELLED_QUESTION_SOURCES:
            key = [str(root), cfg.val_fraction, cfg.heldout_fraction, "v1"]
        else:
            key = [str(root), cfg.val_fraction, cfg.heldout_fraction, cfg.per_mille.get(src)]
        if cache.is_file():
            raw = json.loads(cache.read_text(encoding="utf-8"))
            if raw.get("key") == key:
                texts += [IntentText(**t) for t in raw["texts"]]
                continue
        t0 = time.time()
        if src in SENTENCE_SOURCES:
            got = sentence_texts(src, root, cfg.sentence_per_mille)
        elif src in LABELLED_QUESTION_SOURCES:
            got = labelled_question_texts(src, root, cfg.val_fraction, cfg.heldout_fraction)
        else:
            if tagger is None:
                from ...models.role_tagger import RoleTagger

                tagger = RoleTagger.from_pretrained()
            got = question_texts(src, root, tagger.predict, cfg.val_fraction,
                                 cfg.heldout_fraction, cfg.per_mille.get(src))  # fmt: skip
        log(f"{src}: {len(got)} texts in {time.time() - t0:.0f} s")
        cache.parent.mkdir(parents=True, exist_ok=True)
        body = {"key": key, "texts": [asdict(t) for t in got]}
        cache.write_text(json.dumps(body), encoding="utf-8")
        texts += got
    return texts


def embed_texts(
    texts: list[IntentText], run_dir: str, feature_set: str = "tagger-logprobs"
) -> torch.Tensor:
    """``[n, d]`` features of the texts (:data:`~logrerank.models.question_intent.
    FEATURE_SETS`), cached per source in ``run_dir`` under a hash of its texts."""
    from ...models.question_intent import FEATURE_SETS

    kind = FEATURE_SETS[feature_set]
    extractor = kind()
    out = torch.zeros(len(texts), kind.dim)
    for src in dict.fromkeys(t.source for t in texts):
        ids = [i for i, t in enumerate(texts) if t.source == src]
        body = "\n".join(texts[i].text for i in ids)
        digest = hashlib.sha1(body.encode()).hexdigest()[:16]
        prefix = "features" if feature_set == "tagger-logprobs" else f"features-{feature_set}"
        cache = Path(run_dir) / f"{prefix}-{digest}.safetensors"
        if cache.is_file():
            feats = load_file(str(cache))["features"]
        else:
            feats = extractor.embed([texts[i].text for i in ids])
            save_file({"features": feats.contiguous()}, str(cache))
        out[ids] = feats
    return out


def _weights(
    texts: list[IntentText], targets: torch.Tensor, cfg: IntentTrainConfig
) -> torch.Tensor:
    """Per-example loss weights: each source sums to 1 (sentence sources: ``sentence_weight``);
    with ``balance_classes`` each role's share of the pooled soft targets is then evened out."""
    count: dict[str, int] = {}
    for t in texts:
        count[t.source] = count.get(t.source, 0) + 1

    def total(src: str) -> float:
        default = cfg.sentence_weight if src in SENTENCE_SOURCES else 1.0
        return float(cfg.source_weight.get(src, default))

    w = torch.tensor([total(t.source) / count[t.source] for t in texts])
    if cfg.balance_classes:
        mass = (w[:, None] * targets).sum(0)
        per_class = mass.sum() / (len(ROLE_NAMES) * mass.clamp_min(1e-9))
        w = w * (targets * per_class).sum(1)
    return w * len(texts) / w.sum()


def accuracy_by_source(probs: torch.Tensor, texts: list[IntentText], targets: torch.Tensor) -> dict:
    """Per source: ``n``, ``accuracy`` (argmax vs argmax of the target), ``majority`` (always
    the source's most frequent target class) and ``target_counts`` per role."""
    out: dict[str, Any] = {}
    pred, gold = probs.argmax(1), targets.argmax(1)
    for src in dict.fromkeys(t.source for t in texts):
        idx = torch.tensor([i for i, t in enumerate(texts) if t.source == src])
        counts = torch.bincount(gold[idx], minlength=len(ROLE_NAMES))
        out[src] = {
            "n": len(idx),
            "accuracy": float((pred[idx] == gold[idx]).float().mean()),
            "majority": float(counts.max() / len(idx)),
            "target_counts": dict(zip(ROLE_NAMES, counts.tolist())),
        }
    return out


def _mean_over(acc: dict, sources: tuple[str, ...]) -> float | None:
    vals = [v["accuracy"] for s, v in acc.items() if s in sources]
    return sum(vals) / len(vals) if vals else None


def _question_mean(acc: dict) -> float | None:
    return _mean_over(acc, QUESTION_SOURCES)


def balanced_accuracy(probs: torch.Tensor, targets: torch.Tensor) -> float:
    """Mean over the roles present in ``targets`` (argmax) of the recall of that role."""
    pred, gold = probs.argmax(1), targets.argmax(1)
    recalls = [float((pred[gold == c] == c).float().mean()) for c in gold.unique().tolist()]
    return sum(recalls) / max(1, len(recalls))


def _identity_(head: torch.nn.Module) -> bool:
    """Make a 3 -> 3 linear head the identity (softmax of the tagger's log-probabilities = the
    tagger's own probabilities); False when the head has another shape."""
    net = getattr(head, "net", None)
    if not isinstance(net, torch.nn.Linear) or net.weight.shape != (3, 3):
        return False
    with torch.no_grad():
        net.weight.copy_(torch.eye(3))
        net.bias.zero_()
    return True


def _report(head: torch.nn.Module, emb: torch.Tensor, texts: list[IntentText],
            targets: torch.Tensor, ids: list[int]) -> dict[str, Any]:  # fmt: skip
    """Held-out figures of ``head``: per source, their mean, pooled over the weakly labelled
    questions, and over the labelled result questions (``result_questions``)."""
    head.eval()
    with torch.no_grad():
        probs = head(emb[ids]).softmax(-1)
    per = accuracy_by_source(probs, [texts[i] for i in ids], targets[ids])
    q = [k for k, i in enumerate(ids) if texts[i].source in QUESTION_SOURCES]
    return {
        "mean_over_question_sources": _question_mean(per),
        "pooled_questions": float((probs[q].argmax(1) == targets[ids][q].argmax(1)).float().mean()),
        "balanced_questions": balanced_accuracy(probs[q], targets[ids][q]),
        "n_questions": len(q),
        "result_questions": _labelled_counts(probs, [texts[i] for i in ids], targets[ids]),
        "per_source": per,
    }


def _labelled_counts(probs: torch.Tensor, texts: list[IntentText], targets: torch.Tensor) -> dict:
    """``{"correct", "n"}`` over the texts of the data-derived labelled question sources
    (PubMedQA, Evidence Inference: all result questions)."""
    idx = [k for k, t in enumerate(texts) if t.source in LABELLED_QUESTION_SOURCES]
    if not idx:
        return {"correct": 0, "n": 0}
    right = probs[idx].argmax(1) == targets[idx].argmax(1)
    return {"correct": int(right.sum()), "n": len(idx)}


def train_intent(cfg: IntentTrainConfig, command: str = "", log=_log) -> dict[str, Any]:
    """Build the data, train the head, evaluate it held out and write the checkpoint.

    The epoch (0 = the initial head: the identity for the 3-feature linear head, i.e. the role
    tagger's own reading of the question) with the best balanced accuracy on the ``val`` texts
    of ``cfg.select_on`` is kept.

    Returns:
        The run summary (also stored under ``"training"`` in the checkpoint's config.json).
    """
    from ...models.question_intent import IntentHead, QuestionIntent, default_checkpoint_dir

    torch.set_num_threads(cfg.threads)
    t_start = time.time()
    texts = build_texts(cfg, log)
    emb = embed_texts(texts, cfg.run_dir, cfg.feature_set)
    targets = torch.tensor([t.target for t in texts])
    on = set(cfg.train_on) if cfg.select_on in ("train_on", "mixed") else set(QUESTION_SOURCES)
    parts = {
        "train": [i for i, t in enumerate(texts) if t.part == "train" and t.source in cfg.train_on],
        "val": [i for i, t in enumerate(texts) if t.part == "val" and t.source in on],
        "heldout": [i for i, t in enumerate(texts) if t.part == "heldout"],
    }
    val_emb, val_targets = emb[parts["val"]], targets[parts["val"]]
    hand_emb = hand_targets = None
    if cfg.select_on in ("handwritten", "mixed"):
        hand = handwritten_val()
        hand_emb = embed_texts(hand, cfg.run_dir, cfg.feature_set)
        hand_targets = torch.tensor([t.target for t in hand])
    if cfg.select_on == "handwritten":
        val_emb, val_targets = hand_emb, hand_targets
    if not len(val_targets):
        raise ConfigError(f"no validation texts to pick the epoch on (select_on={cfg.select_on})")
    tr = torch.tensor(parts["train"])
    w = _weights([texts[i] for i in parts["train"]], targets[tr], cfg)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    head = IntentHead(emb.shape[1], cfg.hidden, cfg.dropout)
    identity = _identity_(head)
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

    def val_score() -> float:
        head.eval()
        with torch.no_grad():
            score = balanced_accuracy(head(val_emb).softmax(-1), val_targets)
            if cfg.select_on == "mixed":
                hand = balanced_accuracy(head(hand_emb).softmax(-1), hand_targets)
                score = (score + hand) / 2
        return score

    zero_shot = _report(head, emb, texts, targets, parts["heldout"]) if identity else None
    best = (val_score(), 0, {k: v.clone() for k, v in head.state_dict().items()})
    history = [{"epoch": 0, "val_balanced": best[0]}]
    for epoch in range(1, cfg.epochs + 1):
        head.train()
        order = torch.randperm(len(tr))
        for s in range(0, len(order), cfg.batch_size):
            b = order[s : s + cfg.batch_size]
            logp = head(emb[tr[b]]).log_softmax(-1)
            loss = -(w[b] * (targets[tr[b]] * logp).sum(1)).sum() / w[b].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        score = val_score()
        history.append({"epoch": epoch, "val_balanced": score})
        if score > best[0]:
            best = (score, epoch, {k: v.clone() for k, v in head.state_dict().items()})
    head.load_state_dict(best[2])
    heldout = _report(head, emb, texts, targets, parts["heldout"])
    summary = {
        "heldout_accuracy": heldout["mean_over_question_sources"],
        "heldout_accuracy_definition": "mean over the question sources of the argmax accuracy "
        "on their held-out questions (weak labels: the role of the gold sentences)",
        "heldout_sentence_accuracy": _mean_over(heldout["per_source"], SENTENCE_SOURCES),
        "heldout_result_questions": heldout["result_questions"],
        "heldout": heldout,
        "heldout_initial_head": zero_shot,
        "best_epoch": best[1],
        "best_val_balanced": best[0],
        "history": history,
        "counts": {p: len(ids) for p, ids in parts.items()} | {"val_texts": len(val_targets)},
        "minutes": (time.time() - t_start) / 60,
        "command": command,
        "config": cfg.to_dict(),
    }
    out = Path(cfg.out_dir) if cfg.out_dir else default_checkpoint_dir()
    extra = {
        "heldout_accuracy": summary["heldout_accuracy"],
        "heldout_result_questions": summary["heldout_result_questions"],
        "training": summary,
    }
    QuestionIntent(head, {"feature_set": cfg.feature_set}).save_pretrained(out, extra)
    Path(cfg.run_dir, "metrics.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    rq = summary["heldout_result_questions"]
    weak = summary["heldout_accuracy"]
    log(f"saved {out}: held-out result questions {rq['correct']} / {rq['n']}"
        + ("" if weak is None else f", weak-label held-out accuracy {weak:.3f}"))  # fmt: skip
    return summary


__all__ = [
    "IntentTrainConfig",
    "handwritten_val",
    "accuracy_by_source",
    "balanced_accuracy",
    "build_texts",
    "train_intent",
]

"""Question-intent classifier: which kind of sentence (background / method / result) a
question asks for.

The LoG-Reranker paper's intent head (eq. 2) is part of the local scorer and reads the question
together with one passage; in the bundled model it has collapsed to nearly the same
distribution for every question, so it cannot be shown as "what the question asks for". This
separate classifier answers that question from the question alone. Its features come from the
bundled role tagger reading the question as a one-sentence abstract (the tagger is the packaged
all-MiniLM-L6-v2 with its top two layers fine-tuned on sentence-role corpora,
:mod:`logrerank.models.role_tagger`): in the shipped checkpoint the tagger's sentence vector
and its three log-probabilities (:class:`TaggerStates`, ``feature_set = "tagger-states"``;
the first checkpoints used the three log-probabilities alone, :class:`TaggerFeatures`). A
trained linear head maps them to the intent (:mod:`logrerank.training.intent.intent_train`,
``logrerank train intent``). It trains on labelled abstract sentences, on questions whose
answer is a result by construction (PubMedQA non-test questions, Evidence Inference train
prompts) and on hand-written training questions of all three kinds; its settings and epoch are
chosen on validation parts and 30 hand-written validation questions
(``logrerank/training/intent/handwritten_val.json``).

The checkpoint folder (``logrerank/checkpoints/question-intent``) holds ``model.safetensors``
(the head only, fp32), ``config.json`` (format tag, head shape, role order, held-out accuracy
per source and the training summary) and ``MODEL_CARD.md``.

Public API::

    clf = QuestionIntent.from_pretrained()          # or load_default() (cached)
    probs = clf.predict(["How were the patients randomized?"])    # [1, 3]
    info = clf.describe("How were the patients randomized?")      # for Ranking.info
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from ..checkpoint import CONFIG_NAME, WEIGHTS_NAME, CheckpointError, read_config
from ..config import ROLE_NAMES
from ..resources import checkpoint_dir

FORMAT = "logrerank-question-intent"
FORMAT_VERSION = 1
SOURCE_NAME = "question-intent classifier"
"""``Ranking.info["question_intent"]["source"]``: where the shown intent comes from."""


class IntentCheckpointError(CheckpointError):
    """A question-intent checkpoint folder is missing, incomplete or does not match."""


def default_checkpoint_dir() -> Path:
    """``<checkpoints root>/question-intent`` (``$LOGRERANK_CHECKPOINTS`` overrides)."""
    return checkpoint_dir("question-intent")


class IntentHead(nn.Module):
    """``Linear(d, hidden) - GELU - Dropout - Linear(hidden, 3)``; ``hidden = 0``: one linear
    layer (multinomial logistic regression)."""

    def __init__(self, d_in: int, hidden: int = 64, dropout: float = 0.1):
        super().__init__()
        if hidden > 0:
            self.net: nn.Module = nn.Sequential(
                nn.Linear(d_in, hidden), nn.GELU(), nn.Dropout(dropout),
                nn.Linear(hidden, len(ROLE_NAMES)),
            )  # fmt: skip
        else:
            self.net = nn.Linear(d_in, len(ROLE_NAMES))
        self.d_in, self.hidden, self.dropout = d_in, hidden, dropout

    def forward(self, x: Tensor) -> Tensor:
        """Role logits ``[n, 3]`` of embeddings ``x`` ``[n, d_in]``."""
        return self.net(x)


class TaggerFeatures:
    """Question features: the role tagger's log-probabilities of each text read alone.

    Args:
        tagger: a loaded :class:`~logrerank.models.role_tagger.RoleTagger`; None = the bundled
            one, loaded on first use.
    """

    dim = len(ROLE_NAMES)

    def __init__(self, tagger: Any = None):
        self._tagger = tagger

    @property
    def tagger(self) -> Any:
        if self._tagger is None:  # the process-wide bundled tagger (shared with the app's roles)
            from .role_tagger import load_default

            self._tagger = load_default()
        return self._tagger

    def embed(self, texts: list[str]) -> Tensor:
        """``[n, 3]`` log-probabilities (each text is a one-sentence abstract)."""
        if not texts:
            return torch.zeros(0, self.dim)
        probs = torch.cat(self.tagger.predict([[t] for t in texts]))
        return probs.clamp_min(1e-6).log()


class TaggerStates(TaggerFeatures):
    """Question features: the role tagger's sentence vector of each text read alone (the
    span mean of its top layer that the tagger's role MLP reads, 384 numbers for MiniLM-L6),
    followed by the tagger's three log-probabilities (:class:`TaggerFeatures`).

    Three numbers say only how the question would read as an abstract sentence, and a question
    reads as no abstract sentence: "Do statins lower the risk of dementia?" reads as background.
    The vector also carries the question's form and wording, so a trained head can learn what
    result questions look like.

    Args:
        tagger: see :class:`TaggerFeatures`.
    """

    dim = 384 + len(ROLE_NAMES)

    @torch.inference_mode()
    def embed(self, texts: list[str]) -> Tensor:
        """``[n, d + 3]`` float32: sentence vector then log-probabilities, per text."""
        from ..local import backbone as bb
        from ..local.tokenize import batches, collate

        tagger = self.tagger
        d = int(tagger.encoder.config.hidden_size)
        if not texts:
            return torch.zeros(0, d + len(ROLE_NAMES))
        tk = tagger.tokenize_docs([[t] for t in texts])
        out = torch.zeros(tk.num_nodes, d + len(ROLE_NAMES))
        seen: list[Tensor] = []
        hook = tagger.head.register_forward_hook(lambda _m, inp, _o: seen.append(inp[0]))
        was = tagger.training
        tagger.eval()
        try:
            for idx in batches(tk.windows, tagger.config.eval_batch_tokens, 64):
                batch = collate([tk.windows[i] for i in idx], tagger.device_)
                seen.clear()
                with bb.autocast(tagger.device_, tagger.autocast_dtype):
                    logits = tagger(batch)
                nodes = batch["nodes"].cpu()
                out[nodes, :d] = seen[0].float().cpu()
                out[nodes, d:] = logits.float().log_softmax(-1).clamp_min(-13.8).cpu()
        finally:
            hook.remove()
            tagger.train(was)
        return out


FEATURE_SETS = {"tagger-logprobs": TaggerFeatures, "tagger-states": TaggerStates}
"""``config.json``'s ``feature_set`` -> feature extractor (absent: ``tagger-logprobs``, the
format of the first checkpoints)."""

FEATURE_TEXT = {
    "tagger-logprobs": "role-tagger log-probabilities of the question read as a one-sentence "
    "abstract (logrerank/checkpoints/role-tagger: packaged all-MiniLM-L6-v2, top two layers "
    "fine-tuned)",
    "tagger-states": "role-tagger sentence vector (span mean of the top layer, 384) and its "
    "three log-probabilities, of the question read as a one-sentence abstract "
    "(logrerank/checkpoints/role-tagger: packaged all-MiniLM-L6-v2, top two layers fine-tuned)",
}


class QuestionIntent:
    """The classifier: a frozen sentence embedder and a trained :class:`IntentHead`.

    Args:
        head: the trained head (put in eval mode).
        meta: the checkpoint's ``config.json`` facts (held-out accuracy, training summary).
        embedder: an object with ``embed(list[str]) -> Tensor [n, d]``; None = the
            extractor of ``meta["feature_set"]`` (:data:`FEATURE_SETS`; the bundled role
            tagger, loaded on first use).
    """

    def __init__(self, head: IntentHead, meta: dict[str, Any] | None = None, embedder: Any = None):
        self.head = head.eval()
        self.meta = dict(meta or {})
        self._embedder = embedder
        self.source: str | None = None  # checkpoint folder it was loaded from

    @property
    def embedder(self) -> Any:
        """The feature extractor (that of :attr:`feature_set` unless one was given)."""
        if self._embedder is None:
            self._embedder = FEATURE_SETS[self.feature_set]()
        return self._embedder

    @property
    def feature_set(self) -> str:
        """The checkpoint's feature set, a key of :data:`FEATURE_SETS`."""
        return str(self.meta.get("feature_set") or "tagger-logprobs")

    @property
    def heldout_accuracy(self) -> float | None:
        """Accuracy on the held-out questions of the question sources (all pooled), or None."""
        value = self.meta.get("heldout_accuracy")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def handwritten_test(self) -> dict[str, int] | None:
        """``{"correct", "n"}`` on the hand-written test questions (recorded by ``python -m
        tests.integration.test_question_intent CHECKPOINT --record``), or None."""
        v = self.meta.get("handwritten_test")
        ok = isinstance(v, dict) and all(isinstance(v.get(k), int) for k in ("correct", "n"))
        return {"correct": v["correct"], "n": v["n"]} if ok else None

    @property
    def heldout_result_questions(self) -> dict[str, int] | None:
        """``{"correct", "n"}`` on the held-out data-derived result questions (PubMedQA
        non-test questions of the held-out hash part, Evidence Inference validation prompts),
        or None."""
        v = self.meta.get("heldout_result_questions")
        ok = isinstance(v, dict) and all(isinstance(v.get(k), int) for k in ("correct", "n"))
        return {"correct": v["correct"], "n": v["n"]} if ok and v["n"] > 0 else None

    @torch.inference_mode()
    def predict(self, questions: list[str]) -> Tensor:
        """``[n, 3]`` float32 probabilities over :data:`~logrerank.config.ROLE_NAMES`."""
        if not questions:
            return torch.zeros(0, len(ROLE_NAMES))
        x = self.embedder.embed(list(questions)).float()
        return self.head(x).float().softmax(-1)

    def describe(self, question: str) -> dict[str, Any]:
        """What ``Ranking.info["question_intent"]`` holds for ``question``.

        Returns:
            ``probs`` (per role, order of ``ROLE_NAMES``), ``label`` (the argmax role),
            ``source`` (:data:`SOURCE_NAME`), ``heldout_accuracy`` (weak labels; None when
            unknown), ``handwritten_test`` (:attr:`handwritten_test`) and
            ``heldout_result_questions`` (:attr:`heldout_result_questions`).
        """
        probs = [float(p) for p in self.predict([question])[0]]
        return {
            "probs": probs,
            "label": ROLE_NAMES[max(range(len(probs)), key=probs.__getitem__)],
            "source": SOURCE_NAME,
            "heldout_accuracy": self.heldout_accuracy,
            "handwritten_test": self.handwritten_test,
            "heldout_result_questions": self.heldout_result_questions,
        }

    def save_pretrained(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write ``model.safetensors`` (the head, fp32) and ``config.json`` into ``path``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        state = {
            k: v.detach().cpu().float().contiguous() for k, v in self.head.state_dict().items()
        }
        tmp = path / (WEIGHTS_NAME + ".tmp")
        save_file(state, str(tmp), metadata={"format": FORMAT})
        tmp.chmod(0o644)
        tmp.replace(path / WEIGHTS_NAME)
        config = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "roles": list(ROLE_NAMES),
            "feature_set": self.feature_set,
            "features": FEATURE_TEXT[self.feature_set],
            "head": {
                "d_in": self.head.d_in,
                "hidden": self.head.hidden,
                "dropout": self.head.dropout,
            },  # fmt: skip
            **(extra or {}),
        }
        (path / CONFIG_NAME).write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_pretrained(
        cls, path: str | Path | None = None, embedder: Any = None
    ) -> QuestionIntent:
        """Load a checkpoint written by :meth:`save_pretrained`.

        Args:
            path: checkpoint folder; None = :func:`default_checkpoint_dir`.
            embedder: see the class; None = the packaged MiniLM, loaded on first use.

        Raises:
            IntentCheckpointError: missing folder or file, wrong format, role order or tensors.
        """
        path = default_checkpoint_dir() if path is None else Path(path)
        raw = read_config(path, FORMAT, FORMAT_VERSION, section="head",
                          label="question-intent", error=IntentCheckpointError)  # fmt: skip
        if str(raw.get("feature_set") or "tagger-logprobs") not in FEATURE_SETS:
            raise IntentCheckpointError(
                f"{path}: unknown feature_set {raw.get('feature_set')!r} "
                f"(known: {sorted(FEATURE_SETS)})"
            )
        if raw.get("roles") != list(ROLE_NAMES):
            raise IntentCheckpointError(
                f"{path}: role order {raw.get('roles')} is not {ROLE_NAMES}"
            )
        h = raw["head"]
        head = IntentHead(int(h["d_in"]), int(h["hidden"]), float(h.get("dropout", 0.0)))
        state = load_file(str(path / WEIGHTS_NAME))
        own = head.state_dict()
        if set(state) != set(own) or any(state[k].shape != own[k].shape for k in own):
            raise IntentCheckpointError(f"{path}: tensors do not match the head in config.json")
        head.load_state_dict(state)
        model = cls(head, raw, embedder)
        model.source = str(path)
        return model


@functools.lru_cache(maxsize=1)
def load_default() -> QuestionIntent:
    """The bundled classifier, loaded once per process (its embedder on first prediction)."""
    return QuestionIntent.from_pretrained()


def accuracy_text(info: dict[str, Any] | None) -> str:
    """How right the classifier is, in words, from a :meth:`QuestionIntent.describe` dict:
    ``"41 of 42 hand-written test questions right (background, method and result), 543 of 552
    held-out result questions (PubMedQA, Evidence Inference)"``, with the weak-label figure
    where the checkpoint has one (each part left out when unknown; ``""`` when all are)."""
    info = info or {}
    parts = []
    hand = info.get("handwritten_test")
    if isinstance(hand, dict) and isinstance(hand.get("n"), int) and hand["n"] > 0:
        parts.append(
            f"{hand.get('correct')} of {hand['n']} hand-written test questions right "
            "(background, method and result)"
        )
    res = info.get("heldout_result_questions")
    if isinstance(res, dict) and isinstance(res.get("n"), int) and res["n"] > 0:
        parts.append(
            f"{res.get('correct')} of {res['n']} held-out result questions "
            "(PubMedQA, Evidence Inference)"
        )
    acc = info.get("heldout_accuracy")
    if isinstance(acc, (int, float)):
        parts.append(f"{100 * float(acc):.0f} % on weakly labelled held-out questions")
    return ", ".join(parts)


def question_intent_info(question: str) -> dict[str, Any] | None:
    """``QuestionIntent.describe`` with the bundled classifier (a fresh dict; the last 64
    questions are cached), or None when the checkpoint is missing."""
    info = _cached_info(question)
    return None if info is None else {**info, "probs": list(info["probs"])}


@functools.lru_cache(maxsize=64)
def _cached_info(question: str) -> dict[str, Any] | None:
    try:
        return load_default().describe(question)
    except (CheckpointError, OSError):
        return None


__all__ = [
    "FEATURE_SETS",
    "FORMAT",
    "SOURCE_NAME",
    "IntentCheckpointError",
    "IntentHead",
    "QuestionIntent",
    "TaggerFeatures",
    "TaggerStates",
    "accuracy_text",
    "default_checkpoint_dir",
    "load_default",
    "question_intent_info",
]

"""Common in-memory schema that every dataset reader produces.

Three record types cover all the public data the project uses:

* :class:`Doc` -- one candidate passage (an abstract, a Wikipedia paragraph, a cited passage),
  already split into sentences.
* :class:`Example` -- one query with its candidate pool and its gold labels (passage level and,
  where the dataset has them, sentence level and role level).
* :class:`RoleExample` -- one abstract with a background / method / result label per sentence,
  for training and testing the role tagger.

Sentence indices everywhere are 0-based indices into ``Doc.sentences``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The three rhetorical roles the reranker predicts, in a fixed order.
ROLES: tuple[str, ...] = ("background", "method", "result")


@dataclass
class Doc:
    """A candidate passage split into sentences.

    Attributes:
        doc_id: Identifier, unique within the benchmark's corpus (always a ``str``; integer ids
            from the source files are converted with ``str``).
        title: Title of the passage; ``""`` when the source has none.
        sentences: The passage's sentences in reading order. Readers keep one entry per source
            sentence so that gold sentence indices from the source stay valid; an entry may be
            an empty string when the source has one (two HotpotQA sentences are blank).
    """

    doc_id: str
    title: str
    sentences: list[str]

    @property
    def text(self) -> str:
        """The passage text: ``" ".join(self.sentences)``.

        Because the join uses exactly one space, sentence ``j`` starts at character offset
        ``sum(len(s) + 1 for s in sentences[:j])`` of ``text`` and ends ``len(sentences[j])``
        characters later. :meth:`sentence_offsets` computes these spans.
        """
        return " ".join(self.sentences)

    def sentence_offsets(self) -> list[tuple[int, int]]:
        """Character spans of each sentence inside :attr:`text`.

        Returns:
            A list of ``(start, end)`` pairs, one per sentence, such that
            ``self.text[start:end] == self.sentences[j]``.
        """
        spans: list[tuple[int, int]] = []
        start = 0
        for sentence in self.sentences:
            spans.append((start, start + len(sentence)))
            start += len(sentence) + 1
        return spans


@dataclass
class Example:
    """One query with its candidate pool and gold labels.

    Attributes:
        qid: Query identifier (``str``), unique within the benchmark split.
        query: The query text (claim, question or citing sentence).
        candidates: The candidate pool, in base-ranker order (BM25 order for pooled benchmarks,
            the file's order for the fixed-pool multi-hop benchmarks). Empty until a pool is
            built (see :mod:`logrerank.data.pools`).
        gold_doc_ids: Ids of the relevant passages, in the order the source lists them.
        gold_sentences: ``doc_id -> sorted gold sentence indices``. Empty when the dataset has no
            sentence labels (PubMedQA, MuSiQue) or when they are not usable (Citation-Integrity,
            whose labels are degenerate; see the reader's docstring).
        roles: ``doc_id -> per-sentence role`` with one entry per sentence of that doc: one of
            :data:`ROLES`, or ``None`` for a sentence whose source label has no mapping. Only
            docs whose source carries role labels appear (PubMedQA).
        meta: Dataset-specific extras (labels, answers, hop structure, ...); every reader sets
            ``meta["dataset"]``.
        gold_gains: Graded relevance, ``doc_id -> grade`` of every judged passage (zero and
            negative grades included), used as the nDCG gain ``max(grade, 0)``. Empty (the
            default) means binary relevance over ``gold_doc_ids``. Set by the user-collection
            readers (:mod:`logrerank.data.beir`).
    """

    qid: str
    query: str
    candidates: list[Doc] = field(default_factory=list)
    gold_doc_ids: list[str] = field(default_factory=list)
    gold_sentences: dict[str, list[int]] = field(default_factory=dict)
    roles: dict[str, list[str | None]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    gold_gains: dict[str, int] = field(default_factory=dict)


@dataclass
class RoleExample:
    """An abstract with one role label per sentence, from a role-tagging corpus.

    Attributes:
        doc_id: Identifier, ``"<file stem>:<index>"`` for CSAbstruct (its own ids are all 0)
            and ``"<file stem>:<PMID>"`` for NICTA-PIBOSO.
        sentences: The abstract's sentences.
        labels: One entry per sentence: one of :data:`ROLES`, or ``None`` where the source label
            has no mapping (the sentence is kept so that context is not lost).
        source: Dataset name (``"csabstruct"`` or ``"nicta_piboso"``).
        raw_labels: The source's own label for each sentence, before mapping.
    """

    doc_id: str
    sentences: list[str]
    labels: list[str | None]
    source: str
    raw_labels: list[str] = field(default_factory=list)


def example_passages(ex: Example) -> list[dict[str, Any]]:
    """The candidates of an example as ranker input (with the dataset's sentence split)."""
    return [
        {"title": d.title, "text": d.text, "id": d.doc_id, "sentences": list(d.sentences)}
        for d in ex.candidates
    ]

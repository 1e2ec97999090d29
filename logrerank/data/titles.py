"""Title conditions of a benchmark: the same pools with full, cut or no passage titles.

A researcher pastes passages with a paper title, a short label or nothing at all, so a ranker
is measured on the same pools in each condition (``logrerank eval --titles``):

=========  ==================================================================
condition  each candidate's title
=========  ==================================================================
``full``   as the benchmark gives it (unchanged)
``first3`` its first three whitespace-separated words
``none``   ``""`` (no title)
=========  ==================================================================

Only titles change: texts, sentences, ids and gold labels are the same, so per-query rows of
two conditions pair up (``logrerank paired-test``).
"""

from __future__ import annotations

import dataclasses

from .schema import Doc, Example

TITLE_CONDITIONS: tuple[str, ...] = ("full", "first3", "none")
"""The title conditions :func:`with_titles` knows, in display order."""


def cut_title(title: str, condition: str) -> str:
    """``title`` under ``condition`` (see the module table).

    Raises:
        ValueError: an unknown condition.
    """
    if condition not in TITLE_CONDITIONS:
        raise ValueError(f"titles must be one of {list(TITLE_CONDITIONS)}, got {condition!r}")
    if condition == "full":
        return title
    if condition == "none":
        return ""
    return " ".join(title.split()[:3])


def with_titles(examples: list[Example], condition: str) -> list[Example]:
    """Copies of ``examples`` whose candidates carry their titles under ``condition``.

    ``full`` returns ``examples`` itself; otherwise new :class:`Example` and :class:`Doc`
    objects (the inputs are not changed).

    Raises:
        ValueError: an unknown condition.
    """
    cut_title("", condition)  # validates
    if condition == "full":
        return examples
    return [
        dataclasses.replace(
            ex,
            candidates=[
                Doc(d.doc_id, cut_title(d.title, condition), list(d.sentences))
                for d in ex.candidates
            ],
            meta={**ex.meta, "titles": condition},
        )
        for ex in examples
    ]

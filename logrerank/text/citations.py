"""Citation markers: whether a text cites a paper the way a citing sentence does.

A query that carries a citation marker is a *citing sentence* (a citance): it points at one
paper and wants the span of that paper it cites, not the evidence a question asks for. The
global stage's gate reads it as one of its pool features
(:func:`logrerank.graph.pool_features.pool_features`).

Three marker forms are recognised (author-year parenthetical, author-year narrative, numeric):

* ``(Brants, 2000)``, ``(Och et al., 2001; Wang and Waibel, 1997)``, ``(see Collins 1999a)``
* ``Berger et al. (1996)``, ``Tillmann and Ney (2000)``, ``Kogure [1990]``
* ``[12]``, ``[3, 7]``, ``[4-6]``, ``[Kogure 90]``

A year range (``(Sweden, 2001-2010)``) is not a marker.
"""

from __future__ import annotations

import re

_YEAR = r"(?:1[89]|20)\d{2}[a-z]?(?![\u2013-]?\d)"  # a year, not the start of a range
_NAME = r"[A-Z][A-Za-z'\u00C0-\u017F-]+"
CITATION_MARKER = re.compile(
    rf"\([^()]*{_NAME}[^()]*?[,\s]\s*{_YEAR}[^()]*\)"  # (Brants, 2000) / (see Collins 1999)
    rf"|{_NAME}(?:\s+et\s+al\.?,?|\s+(?:and|&)\s+{_NAME})?\s*[(\[]\s*{_YEAR}\s*[)\]]"  # Collins (1999)
    rf"|\[\s*{_NAME}[^\[\]]*?\s(?:1[89]|20)?\d{{2}}[a-z]?\s*\]"  # [Kogure 90]
    r"|\[\s*\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\s*\]"  # [12], [3, 7], [4-6]
)
"""Any of the three marker forms of the module docstring."""


def has_citation_marker(text: str) -> bool:
    """Whether ``text`` carries a citation marker (:data:`CITATION_MARKER`).

    Examples:
        >>> has_citation_marker("We tag with TnT (Brants, 2000).")
        True
        >>> has_citation_marker("Did metformin lower cancer incidence (HR 0.85, 95% CI 0.78-0.93)?")
        False
    """
    return bool(CITATION_MARKER.search(text or ""))


__all__ = ["CITATION_MARKER", "has_citation_marker"]

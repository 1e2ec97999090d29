"""The PubMedQA section-heading lexicon: which structured-abstract headings of PQA-L mark
background, method or result sections (:data:`PUBMEDQA_ROLE_MAP`, :func:`pubmedqa_role`).
"""

from __future__ import annotations

_BACKGROUND_HEADINGS = (
    "BACKGROUND",
    "INTRODUCTION",
    "CONTEXT",
    "BACKGROUND CONTEXT",
    "OBJECTIVE",
    "OBJECTIVES",
    "OBJECT",  # J Neurosurg's spelling of OBJECTIVE
    "PRIMARY OBJECTIVE",
    "STUDY OBJECTIVE",
    "STUDY OBJECTIVES",
    "PURPOSE",
    "PURPOSES",
    "PURPOSE OF THE STUDY",
    "PURPOSE OF INVESTIGATION",
    "AIM",
    "AIMS",
    "GOAL",
    "HYPOTHESIS",
    "HYPOTHESES",
    "RATIONALE",
    "RATIONALE AND OBJECTIVES",
    "RATIONALE, AIMS AND OBJECTIVES",
    "AIMS AND OBJECTIVES",
    "AIMS AND BACKGROUND",
    "CONTEXT AND OBJECTIVES",
    "INTRODUCTION AND HYPOTHESIS",
    "BACKGROUND AND PURPOSE",
    "BACKGROUND AND OBJECTIVE",
    "BACKGROUND AND OBJECTIVES",
    "BACKGROUND AND AIM",
    "BACKGROUND AND AIMS",
    "BACKGROUND AND AIM OF THE STUDY",
    "BACKGROUND AND STUDY AIMS",
    "BACKGROUND AND STUDY OBJECTIVE",
    "SUMMARY OF BACKGROUND DATA",
    "SUMMARY BACKGROUND DATA",
)
_METHOD_HEADINGS = (
    "METHOD",
    "METHODS",
    "METHODOLOGY",
    "MATERIAL",
    "MATERIALS AND METHODS",
    "MATERIAL AND METHODS",
    "MATERIAL AND METHOD",
    "METHODS AND MATERIALS",
    "METHOD AND MATERIAL",
    "PATIENTS AND METHODS",
    "PATIENTS AND METHOD",
    "PATIENT AND METHODS",
    "SUBJECTS AND METHODS",
    "PROBANDS AND METHODS",
    "STUDY POPULATION AND METHODS",
    "METHODS OR INTERVENTIONS",
    "DESIGN",
    "STUDY DESIGN",
    "RESEARCH DESIGN",
    "EXPERIMENTAL DESIGN",
    "DESIGN OF STUDY",
    "RESEARCH DESIGN AND METHODS",
    "STUDY DESIGN AND METHODS",
    "METHODS AND STUDY DESIGN",
    "STUDY DESIGN AND SETTING",
    "DESIGN AND SETTING",
    "DESIGN, SETTING, AND PARTICIPANTS",
    "DESIGN, SETTING AND PATIENTS",
    "DESIGN, SETTING, AND PATIENTS",
    "SETTING",
    "SETTINGS",
    "STUDY SETTING",
    "LOCATION",
    "SETTING AND PARTICIPANTS",
    "SETTINGS AND PARTICIPANTS",
    "SETTING AND PATIENTS",
    "PATIENTS AND SETTING",
    "LOCATION, SUBJECTS, AND INTERVENTIONS",
    "PATIENTS",
    "PARTICIPANTS",
    "SUBJECTS",
    "POPULATION",
    "SAMPLE",
    "PATIENT SAMPLE",
    "STUDY SAMPLE",
    "POPULATION AND SAMPLE",
    "PATIENTS AND PARTICIPANTS",
    "PARTICIPANTS AND INTERVENTION",
    "INTERVENTION",
    "INTERVENTIONS",
    "INTERVENTIONS AND OUTCOME MEASURES",
    "MAIN OUTCOME MEASURES",
    "MAIN OUTCOME MEASURE",
    "MAIN OUTCOME MEASUREMENTS",
    "MAIN OUTCOME",
    "OUTCOME MEASURES",
    "OUTCOME MEASURE",
    "OUTCOMES MEASURED",
    "PRIMARY AND SECONDARY OUTCOME MEASURES",
    "OUTCOME",  # in PQA-L these sections name the outcome measures, not results
    "OUTCOMES",
    "END POINT",
    "MEASURES",
    "MAIN MEASURES",
    "MEASUREMENTS",  # Annals style: what was measured
    "MAIN RESEARCH VARIABLES",
    "DATA SOURCES",
    "DATA SOURCE",
    "STUDY SELECTION",
    "DATA EXTRACTION",
    "EXTRACTION METHODS",
    "COLLECTION",
    "CASE DEFINITION",
)
_RESULT_HEADINGS = (
    "RESULTS",
    "RESULT",
    "MAIN RESULTS",
    "KEY RESULTS",
    "FINDINGS",
    "PRINCIPAL FINDINGS",
    "OBSERVATIONS",
    "MEASUREMENTS AND MAIN RESULTS",
    "MEASUREMENTS AND RESULTS",
    "MEASUREMENT AND RESULTS",
    "RESULTS AND DISCUSSION",
    "RESULTS AND LIMITATIONS",
    "DATA SYNTHESIS",  # systematic reviews report their pooled findings here
)

#: PubMedQA section heading (upper case, stripped) -> role. It covers 121 of the 140 distinct
#: headings in PQA-L, which carry all but 48 of its 3,358 sections. Headings not in the
#: table map to ``None`` (no role): mixed sections (``METHODS AND RESULTS``,
#: ``OBJECTIVE AND METHODS``), discussion-like ones (``DISCUSSION``, ``LIMITATIONS``,
#: ``SUMMARY``, ``MAIN BODY``), case descriptions (``CASE REPORT(S)``, ``CASE PRESENTATION``,
#: ``PRESENTATION``, ``DESCRIPTION``), registrations, ``UNLABELLED``, and splitting debris
#: such as ``", FSAII"`` or ``"ICU LOS"``.
PUBMEDQA_ROLE_MAP: dict[str, str] = {
    **dict.fromkeys(_BACKGROUND_HEADINGS, "background"),
    **dict.fromkeys(_METHOD_HEADINGS, "method"),
    **dict.fromkeys(_RESULT_HEADINGS, "result"),
}


def pubmedqa_role(heading: str) -> str | None:
    """Map a PubMedQA section heading to a role.

    Args:
        heading: A raw ``LABELS`` entry, e.g. ``"MATERIALS AND METHODS"``.

    Returns:
        ``"background"``, ``"method"`` or ``"result"``; ``None`` when the heading is not in
        :data:`PUBMEDQA_ROLE_MAP`.
    """
    return PUBMEDQA_ROLE_MAP.get(" ".join(heading.upper().split()))

"""``logrerank build-df``: the background document-frequency table of the shared-term links
(:mod:`logrerank.text.build_df`)."""

from __future__ import annotations

import argparse


def cmd_build_df(args: argparse.Namespace) -> int:
    """Count document frequencies over the training corpora and write the table."""
    from ..text.build_df import run

    return run(args)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``build-df``."""
    from ..text.build_df import add_arguments

    p = sub.add_parser(
        "build-df",
        help="build the background document-frequency table of shared-term links",
        description="Document frequencies of tokens over scientific training corpora (SciFact "
        "corpus, CSAbstruct/NICTA-PIBOSO/Evidence Inference train, PubMedQA outside its test ids, "
        "CL-SciSumm ScisummNet, HotpotQA/MuSiQue train paragraphs); writes the table the "
        "package ships (logrerank/lexicon/background_df.tsv.gz).",
    )
    add_arguments(p)
    p.set_defaults(func=cmd_build_df)

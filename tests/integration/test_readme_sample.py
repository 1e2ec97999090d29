"""The README's sample CLI output equals what ``logrerank rerank`` prints now.

``python tools/refresh_readme.py --check`` runs the command of the README's ``cli-sample`` block
on the bundled checkpoints and compares its output (repository paths made relative, the
``timings:`` line left out) with the block's ``text``. When this fails, run
``python tools/refresh_readme.py`` and commit the README.
"""

from __future__ import annotations

import pytest

from tools.refresh_readme import check


@pytest.mark.slow
def test_the_readme_sample_matches_the_cli() -> None:
    same, diff = check()
    assert same, "README sample is stale; run python tools/refresh_readme.py\n" + diff

"""The dense prior's embeddings kept on disk: written, read back, checked against the embedder."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from logrerank.ranking.dense_prior import KEPT_FILE, DensePrior, digest, load_kept, save_kept
from logrerank.types import Passage
from tests.helpers import FakeEmbedder


def test_digest_is_the_sha1_of_the_utf8_text():
    """Kept rows are filed under the 20-byte SHA-1 of the text."""
    assert digest("abc").hex() == "a9993e364706816aba3e25717850c26c9cd0d89d"
    assert len(digest("é")) == 20 and digest("é") != digest("e")


def test_kept_embeddings_survive_a_new_process_and_are_not_embedded_again(tmp_path):
    """A second DensePrior that reads the file embeds only the query; its cosines are the
    first one's; every embedding is kept, also those the in-memory store has dropped; a prior
    that added nothing leaves the file as it is."""
    passages = [Passage("ab. cd.", "T"), Passage("e.")]
    sents = [SimpleNamespace(passage_idx=p, text=t) for p, t in ((0, "ab."), (0, "cd."), (1, "e."))]
    first = DensePrior(FakeEmbedder(), max_passages=1, name="enc")
    assert first.load(tmp_path / KEPT_FILE) == 0  # nothing there yet: start empty
    before = first.sentences("q", passages, sents)
    before_p = first("q", passages)
    assert len(first.store) == 1  # the store forgets beyond max_passages ...
    # ... the kept rows do not: 4 texts (the untitled passage "e." is also its own sentence)
    assert first.save(tmp_path / KEPT_FILE) == 4

    fake = FakeEmbedder()
    second = DensePrior(fake, name="enc")
    assert second.load(tmp_path / KEPT_FILE) == 4
    assert second.sentences("q", passages, sents).tolist() == pytest.approx(before.tolist())
    assert second("q", passages).tolist() == pytest.approx(before_p.tolist())
    assert fake.seen == ["q"]  # only the query was embedded
    second.sentences("q", [Passage("new.", "T")], [SimpleNamespace(passage_idx=0, text="new.")])
    assert fake.seen == ["q", "T. new."]
    assert second.save(tmp_path / KEPT_FILE) == 5
    assert not list(tmp_path.glob("*.tmp"))  # written atomically
    second("q", [Passage("xy", "T")])  # a new text ("T. xy"): added, and written
    assert second.added == 1 and second.save(tmp_path / KEPT_FILE) == 6
    third = DensePrior(FakeEmbedder(), name="enc")
    third.load(tmp_path / KEPT_FILE)
    stamp = (tmp_path / KEPT_FILE).stat().st_mtime_ns
    third.sentences("q", passages, sents)  # every text is kept: nothing new, no write
    assert third.added == 0 and third.save(tmp_path / KEPT_FILE) == 6
    assert (tmp_path / KEPT_FILE).stat().st_mtime_ns == stamp


def test_a_file_of_another_embedder_is_refused(tmp_path):
    """Embeddings of another model never mix in: reading them raises, naming both."""
    first = DensePrior(FakeEmbedder(), name="enc-a")
    first.load(tmp_path / KEPT_FILE)
    first("q", [Passage("x")])
    first.save(tmp_path / KEPT_FILE)
    with pytest.raises(ValueError, match="enc-a.*enc-b"):
        DensePrior(FakeEmbedder(), name="enc-b").load(tmp_path / KEPT_FILE)


def test_nothing_is_written_when_nothing_was_kept(tmp_path):
    """Without load() a prior keeps nothing, and save() writes no file."""
    prior = DensePrior(FakeEmbedder(), name="enc")
    prior("q", [Passage("x")])
    assert prior.kept is None and prior.save(tmp_path / KEPT_FILE) == 0
    assert not (tmp_path / KEPT_FILE).exists()


def test_model_helpers_and_the_eval_hook_warn_on_a_foreign_file(tmp_path, capsys):
    """load_kept / save_kept work on a model's prior (``caches.dense``); the eval command's hook
    warns and keeps nothing when the folder holds another embedder's file."""
    from logrerank.cli.eval import _load_kept

    model = SimpleNamespace(caches=SimpleNamespace(dense=DensePrior(FakeEmbedder(), name="enc")))
    assert load_kept(model, tmp_path) == 0
    model.caches.dense("q", [Passage("x"), Passage("yy")])
    assert save_kept(model, tmp_path / "sub") == 2  # the folder is made
    assert _load_kept(model, tmp_path / "sub") == 2

    other = SimpleNamespace(caches=SimpleNamespace(dense=DensePrior(FakeEmbedder(), name="other")))
    assert _load_kept(other, tmp_path / "sub") is None
    assert other.caches.dense.kept is None
    assert "dense-prior embeddings not kept" in capsys.readouterr().err


def test_two_runs_sharing_a_folder_add_up(tmp_path):
    """Two priors that read the same (empty) file and embed different texts both end up filed:
    save() reads what the other wrote first."""
    one, two = DensePrior(FakeEmbedder(), name="enc"), DensePrior(FakeEmbedder(), name="enc")
    one.load(tmp_path / KEPT_FILE), two.load(tmp_path / KEPT_FILE)
    one("q", [Passage("x")])
    two("q", [Passage("yy"), Passage("zzz")])
    assert one.save(tmp_path / KEPT_FILE) == 1
    assert two.save(tmp_path / KEPT_FILE) == 3  # its two and the other's one
    fake = FakeEmbedder()
    three = DensePrior(fake, name="enc")
    assert three.load(tmp_path / KEPT_FILE) == 3
    three("q", [Passage("x"), Passage("yy"), Passage("zzz")])
    assert fake.seen == ["q"]

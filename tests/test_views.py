"""The report views of the experiment chapters: a sentence of :class:`Lines` printed in text wraps at the
column's width and loses no word; in HTML it stays one paragraph."""

from __future__ import annotations

from setfuncs.experiments.views import WIDTH, Lines


def test_a_long_sentence_wraps_at_the_width_and_keeps_every_word() -> None:
    sentence = " ".join(f"word{i}" for i in range(60))
    shown = Lines((sentence, "short"))
    text = str(shown).splitlines()
    assert len(text) > 2 and all(len(line) <= WIDTH for line in text)
    assert " ".join(text).split() == (sentence + " short").split()
    assert text[1].startswith("  ") and text[-1] == "short"
    assert shown._repr_html_().count("<p>") == 2


def test_a_word_longer_than_the_width_is_kept_whole() -> None:
    url = "https://example.org/" + "x" * (WIDTH + 10)
    assert url in str(Lines((f"see {url} for more",)))

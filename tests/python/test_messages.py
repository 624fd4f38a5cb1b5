"""Bounded messages (perfprof._messages, issue 34): a list of many items names five and counts the
rest; an item's text is one line of at most 300 characters saying how long it was."""
from __future__ import annotations

from perfprof._messages import cut, listed, one_line


def test_a_short_text_is_kept_and_put_on_one_line():
    assert one_line("  no such file:\n  /data/run\t(rank 3)\n") == "no such file: /data/run (rank 3)"
    assert cut("  kept as it is  ") == "  kept as it is  "


def test_a_long_text_is_cut_to_its_limit_saying_how_long_it_was():
    text = "a" * 1_000
    assert cut(text) == "a" * 280 + "… (1,000 characters)"  # 280 + 20 = 300
    # 600 b's and 599 spaces; the first 20 characters, the trailing space dropped, and 20 more.
    assert one_line("b\n" * 600, limit=40) == "b b b b b b b b b b… (1,199 characters)"


def test_a_list_names_the_first_five_and_counts_the_rest():
    assert listed(["a", "b"]) == "a; b"
    assert listed([str(n) for n in range(5)], ", ") == "0, 1, 2, 3, 4"
    assert listed([f"run{n}: failed\nsee log" for n in range(1_500)]) == (
        "run0: failed see log; run1: failed see log; run2: failed see log; run3: failed see log; "
        "run4: failed see log; … and 1,495 more")
    assert listed([], ", ") == ""

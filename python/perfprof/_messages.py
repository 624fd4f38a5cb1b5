"""Messages that stay a few lines long however many things went wrong (issue 34: a cluster of
1,500 run directories failed with one 102 KB line).

A message that names many items names the first few, then how many more (:func:`listed`); an
item's own text, an exception's message that may quote a whole file or a child's output, is
cut to one line of bounded length (:func:`one_line`). Where every item matters, a file holds
them all (``cluster_report.md``, ``results.jsonl``, the sweep's logs) and the message says so.
"""
from __future__ import annotations

import re
from typing import Sequence

#: Items a message names before "… and N more".
LISTED_ITEMS = 5
#: Characters of one item's text in a message.
ITEM_CHARACTERS = 300

ELLIPSIS = "…"
_WHITESPACE = re.compile(r"\s+")


def one_line(text: str, limit: int = ITEM_CHARACTERS) -> str:
    """`text` on one line (each run of whitespace, line breaks included, as one space), cut to
    `limit` characters (:func:`cut`)."""
    return cut(_WHITESPACE.sub(" ", text).strip(), limit)


def cut(line: str, limit: int = ITEM_CHARACTERS) -> str:
    """`line` when it has at most `limit` characters; else its start and an ellipsis saying how
    long it was, `limit` characters in all (a limit below 30 leaves room for the ellipsis alone)."""
    if len(line) <= limit:
        return line
    left_out = f"{ELLIPSIS} ({len(line):,} characters)"
    return line[:max(0, limit - len(left_out))].rstrip() + left_out


def listed(items: Sequence[str], separator: str = "; ", limit: int = LISTED_ITEMS) -> str:
    """The first `limit` of `items` joined by `separator`, each on one line (:func:`one_line`),
    then ``… and N more`` for the rest."""
    shown = separator.join(one_line(item) for item in items[:limit])
    rest = len(items) - limit
    return shown + (f"{separator}{ELLIPSIS} and {rest:,} more" if rest > 0 else "")

"""The Jinja2 environment of the pages: templates from the package only, every value
autoescaped, no template text ever taken from run data."""
from __future__ import annotations

from typing import Any


def environment() -> Any:
    """A Jinja2 Environment over perfprof/ui/templates with HTML autoescaping and undefined
    names an error (a misspelt field fails the page instead of rendering blank)."""
    import jinja2

    from ._assets import TEMPLATES

    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)

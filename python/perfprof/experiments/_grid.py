"""A sweep's grid: ``NAME=v1,v2`` dimensions, their Cartesian product, and how a configuration
reaches the script (an environment variable per name, ``{NAME}`` in its arguments)."""
from __future__ import annotations

import itertools
import re
from typing import Dict, List, Sequence, Tuple

#: A grid name is an environment variable's name.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Dimension = Tuple[str, List[str]]


def parse_grid(texts: Sequence[str]) -> List[Dimension]:
    """The dimensions of ``--grid NAME=v1,v2`` options, in the order given.

    Raises ``ValueError`` naming the text that is not ``NAME=VALUE[,VALUE...]``, a name that
    cannot be an environment variable, a name given twice, or an empty or repeated value."""
    dimensions: List[Dimension] = []
    for text in texts:
        name, equals, values_text = text.partition("=")
        name = name.strip()
        if not equals or not name:
            raise ValueError(f"{text!r} is not NAME=VALUE[,VALUE...]")
        if not _NAME.match(name):
            raise ValueError(f"grid name {name!r} must be an environment variable's name (letters, digits, _)")
        if any(name == known for known, _ in dimensions):
            raise ValueError(f"grid name {name!r} is given twice")
        values = [value.strip() for value in values_text.split(",")]
        if "" in values:
            raise ValueError(f"grid {name!r} has an empty value in {values_text!r}")
        if len(set(values)) != len(values):
            raise ValueError(f"grid {name!r} repeats a value in {values_text!r}")
        dimensions.append((name, values))
    return dimensions


def configurations(dimensions: Sequence[Dimension]) -> List[Dict[str, str]]:
    """Every combination of one value per dimension, the last dimension varying fastest; one
    empty configuration for no grid."""
    names = [name for name, _ in dimensions]
    return [dict(zip(names, values)) for values in itertools.product(*(values for _, values in dimensions))]


def substituted(arguments: Sequence[str], config: Dict[str, str]) -> List[str]:
    """`arguments` with each ``{NAME}`` of a grid name replaced by its value; other braces stay."""
    if not config:
        return list(arguments)
    pattern = re.compile("|".join(re.escape("{" + name + "}") for name in config))
    return [pattern.sub(lambda match: config[match.group(0)[1:-1]], argument) for argument in arguments]

"""How the plots look: the themes, new figures, saving them as PNG, label lengths.

Figures are made with ``matplotlib.figure.Figure``, never ``pyplot``: no backend is chosen, no
window can open, and nothing is left in pyplot's global list of figures when auto-plot runs in a
profiled job. They are drawn on the Agg canvas.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Sequence, Tuple

# Colour-blind-safe categorical colours (Okabe-Ito), light on dark and dark on light alike.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"]

_LIGHT: Dict[str, Any] = {
    "figure.facecolor": "white", "axes.facecolor": "white", "savefig.facecolor": "white",
    "axes.edgecolor": "#333333", "axes.labelcolor": "#222222", "text.color": "#222222",
    "xtick.color": "#333333", "ytick.color": "#333333", "grid.color": "#dddddd",
    "legend.facecolor": "white", "legend.edgecolor": "#cccccc",
}
_DARK: Dict[str, Any] = {
    "figure.facecolor": "#1e1e1e", "axes.facecolor": "#262626", "savefig.facecolor": "#1e1e1e",
    "axes.edgecolor": "#bbbbbb", "axes.labelcolor": "#e6e6e6", "text.color": "#e6e6e6",
    "xtick.color": "#cccccc", "ytick.color": "#cccccc", "grid.color": "#444444",
    "legend.facecolor": "#262626", "legend.edgecolor": "#555555",
}
_COMMON: Dict[str, Any] = {
    "axes.grid": True, "grid.linewidth": 0.6, "axes.axisbelow": True,
    "axes.titlesize": 12, "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9,
    "legend.fontsize": 8, "font.size": 10,
}

#: The themes by name (``--theme``, the configuration's ``theme``).
THEMES: Dict[str, Dict[str, Any]] = {"light": _LIGHT, "dark": _DARK}

FIGURE_WIDTH = 10.0  # inches; at 100 dpi a PNG is 1000 pixels wide
DPI = 100
LABEL_WIDTH = 48     # characters of a kernel or operator name shown on an axis


@contextlib.contextmanager
def themed(theme: str) -> Iterator[None]:
    """Figures made and saved inside take the colours of `theme` ("light" or "dark")."""
    import matplotlib
    from cycler import cycler

    # Any: rcParams' keys are Literal-typed.
    params: Any = {**_COMMON, **THEMES[theme], "axes.prop_cycle": cycler(color=PALETTE)}
    with matplotlib.rc_context(params):
        yield


def new_figure(rows: int = 1, height: float = 5.0) -> Tuple[Any, List[Any]]:
    """A figure of `rows` axes stacked vertically (sharing x), and the axes."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(FIGURE_WIDTH, height), dpi=DPI, layout="constrained")
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return figure, list(axes)


def bar_height(rows: float) -> float:
    """A figure height that gives each of `rows` horizontal bars room for its label."""
    return max(3.0, 1.2 + 0.32 * rows)


def save(figure: Any, path: str) -> None:
    """Write `figure` as a PNG at `path`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .._files import written_by_library

    FigureCanvasAgg(figure)
    with written_by_library(path) as written:
        figure.savefig(written, format="png", dpi=DPI)


def shorten(label: str, width: int = LABEL_WIDTH) -> str:
    """`label` cut to `width` characters by an ellipsis in its middle: template-heavy kernel
    names run to hundreds of characters, and they differ as often at the end as at the start."""
    if len(label) <= width:
        return label
    head = (width - 1) // 2
    return label[:head] + "…" + label[len(label) - (width - 1 - head):]


def colours(count: int) -> List[str]:
    """`count` colours from the palette, repeating it when needed."""
    return [PALETTE[index % len(PALETTE)] for index in range(count)]


def unique(labels: Sequence[str]) -> List[str]:
    """`labels` made distinct after shortening (two long names may share their start)."""
    seen: Dict[str, int] = {}
    result = []
    for label in labels:
        short = shorten(label)
        seen[short] = seen.get(short, 0) + 1
        result.append(short if seen[short] == 1 else f"{short} ({seen[short]})")
    return result

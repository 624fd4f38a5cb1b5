"""What the pages load, all from installed packages (no CDN): perfprof's stylesheet and script,
and the plotly.js bundle that ships inside the plotly wheel."""
from __future__ import annotations

import importlib.util
import os
from typing import Dict

_HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(_HERE, "templates")


def _plotly_js() -> str:
    """plotly.min.js inside the installed plotly package, found without importing plotly (whose
    Python side the pages do not need). ImportError, saying how to get it, when plotly is absent."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("perfprof ui and perfprof report need plotly: pip install 'perfprof[ui]'")
    path = os.path.join(list(spec.submodule_search_locations)[0], "package_data", "plotly.min.js")
    if not os.path.isfile(path):
        raise ImportError(f"the plotly package has no {path}: reinstall it (pip install 'perfprof[ui]')")
    return path


def asset_paths() -> Dict[str, str]:
    """Every file the pages may load, by the name they load it as: nothing else is served."""
    return {"ui.css": os.path.join(_HERE, "static", "ui.css"), "ui.js": os.path.join(_HERE, "static", "ui.js"),
            "plotly.min.js": _plotly_js()}


def read_asset(name: str) -> str:
    with open(asset_paths()[name], encoding="utf-8") as file:
        return file.read()

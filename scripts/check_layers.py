#!/usr/bin/env python3
"""Checks that csrc/ folders include only folders of a lower layer (so no #include cycle).

    python3 scripts/check_layers.py [CSRC_DIR]

The layers follow the data flow (docs/design.md): collect -> capture -> trace -> analysis ->
export, with bindings/ (glue) on top. A folder may include its own headers and those of any
folder in a lower layer; folders of one layer are independent of each other. Exits 1 and names
every include that breaks the order, or a folder the table does not place.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Tuple

LAYERS: Tuple[Tuple[str, ...], ...] = (
    ("common",),                          # clock, strings, JSON text
    ("memory",),                          # memory events and their categories
    ("record", "schedule"),               # per-thread buffers and what they hand over; the step machine
    ("cupti", "mstx", "torch_hooks",      # collectors
     "python_hooks", "telemetry"),        #   (python_hooks: those that read Python objects;
                                          #   telemetry: the /proc and NVML samplers)
    ("capture",),                         # a session's capture and its file format
    ("trace",),                           # the trace model, built from a capture
    ("analysis", "import"),               # what is derived from the model; Chrome traces read
                                          #   into a capture and built into the model
    ("export",),                          # file formats
    ("bindings",),                        # the Python module: entry points and registration
)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^/"]+)/[^"]+"')


def layer_of() -> Dict[str, int]:
    return {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}


def violations(csrc: str) -> List[str]:
    ranks = layer_of()
    problems = []
    for folder in sorted(os.listdir(csrc)):
        path = os.path.join(csrc, folder)
        if not os.path.isdir(path):
            continue
        if folder not in ranks:
            problems.append(f"csrc/{folder}/ is in no layer: add it to LAYERS in {__file__}")
            continue
        for name in sources_under(path):
            with open(os.path.join(path, name), encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    match = INCLUDE.match(line)
                    if not match or match.group(1) == folder:
                        continue
                    included = match.group(1)
                    if included not in ranks:
                        problems.append(f"csrc/{folder}/{name}:{number}: includes csrc/{included}/, "
                                        "which is in no layer")
                    elif ranks[included] >= ranks[folder]:
                        problems.append(f"csrc/{folder}/{name}:{number}: {folder}/ includes {included}/, "
                                        f"which is not in a lower layer")
    return problems


def sources_under(folder: str) -> List[str]:
    """Every file below `folder` (subfolders belong to its layer), as paths relative to it, sorted."""
    found = []
    for root, _, names in os.walk(folder):
        found.extend(os.path.relpath(os.path.join(root, name), folder) for name in names)
    return sorted(found)


def main() -> int:
    csrc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "csrc")
    problems = violations(csrc)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"csrc/ folders follow their layers ({len(layer_of())} folders)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

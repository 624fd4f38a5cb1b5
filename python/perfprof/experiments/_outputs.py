"""A sweep run's results, for ``perfprof sweep --verify``: the script records its output tensors
with :func:`record_output`, and ``perfprof aggregate`` compares each run's with those of its
baseline (docs/experiments.md, "Verifying outputs").

The outputs are numpy ``.npy`` files, one per name, in the folder ``perfprof sweep --verify``
gives each run in the environment variable ``PERFPROF_OUTPUTS_DIR``; without it (a run that is not
verified) recording does nothing, so a script may call it whatever the command.
numpy (and torch) are imported only when an output is recorded or compared.
"""
from __future__ import annotations

import math
import os
import re
from typing import Any, Dict, Optional, Tuple

#: The environment variable that names the folder a run's outputs go to.
OUTPUTS_ENV = "PERFPROF_OUTPUTS_DIR"

#: Verification codes (a run's outputs against its baseline's).
VERIFIED = "VERIFIED"              # compared: mean_rel_error is set
NO_OUTPUT = "NO_OUTPUT"            # the run recorded no output
NO_BASELINE_OUTPUT = "NO_BASELINE_OUTPUT"  # its baseline run recorded none
MISMATCH = "MISMATCH"              # different output names or shapes: not comparable

_NAME = re.compile(r"[A-Za-z0-9_.-]+\Z")
_SUFFIX = ".npy"


def record_output(name: str, value: Any) -> Optional[str]:
    """Record `value` (a tensor, or anything ``numpy.asarray`` takes) as this run's output `name`,
    for ``perfprof sweep --verify``; its path, or None when the run is not verified (nothing is
    written). Floating-point tensors are kept as float64; recording a name again replaces it.

    ``TypeError`` when `name` is not a str, ``ValueError`` when it is empty or holds characters
    other than letters, digits, ``_``, ``.`` and ``-``.
    """
    if not isinstance(name, str):
        raise TypeError(f"record_output: 'name' must be a str, got {type(name).__name__}")
    if not _NAME.match(name) or name in (".", ".."):
        raise ValueError(f"record_output: 'name' {name!r} must be letters, digits, '_', '.' or '-'")
    folder = os.environ.get(OUTPUTS_ENV)
    if not folder:
        return None
    import numpy

    from .._files import make_directory, replaced_whole

    make_directory(folder, follow_link=True)
    path = os.path.join(folder, name + _SUFFIX)
    with replaced_whole(path, "wb") as file:
        numpy.save(file, _as_array(value), allow_pickle=False)
    return path


def _as_array(value: Any) -> Any:
    import numpy

    if hasattr(value, "detach"):  # a torch tensor, on whatever device
        tensor = value.detach().cpu()
        value = (tensor.double() if tensor.is_floating_point() else tensor).numpy()
    return numpy.asarray(value)


def read_outputs(folder: str) -> Dict[str, Any]:
    """The outputs recorded into `folder`, by name ({} when there is none); ``ValueError`` naming
    the file that is not a readable ``.npy`` file."""
    import numpy

    outputs = {}
    for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        if entry.endswith(_SUFFIX):
            path = os.path.join(folder, entry)
            try:
                outputs[entry[:-len(_SUFFIX)]] = numpy.load(path, allow_pickle=False)
            except (OSError, ValueError) as error:
                raise ValueError(f"{path}: not a recorded output: {error}") from None
    return outputs


def verify(outputs_dir: Optional[str], baseline_dir: Optional[str]) -> Tuple[str, Optional[float]]:
    """A run's outputs against its baseline's: (code, mean relative error). The error is the
    mean, over the outputs, of sum|x - b| / sum|b| (0 when both sums are 0, inf when only the
    baseline's is); set for VERIFIED only."""
    outputs = read_outputs(outputs_dir) if outputs_dir else {}
    if not outputs:
        return NO_OUTPUT, None
    reference = read_outputs(baseline_dir) if baseline_dir else {}
    if not reference:
        return NO_BASELINE_OUTPUT, None
    if set(outputs) != set(reference) or any(outputs[name].shape != reference[name].shape for name in reference):
        return MISMATCH, None
    errors = [_relative_error(outputs[name], reference[name]) for name in sorted(reference)]
    return VERIFIED, math.fsum(errors) / len(errors)


def _relative_error(value: Any, reference: Any) -> float:
    import numpy

    difference = float(numpy.abs(value.astype(numpy.float64) - reference.astype(numpy.float64)).sum())
    scale = float(numpy.abs(reference.astype(numpy.float64)).sum())
    if scale == 0:
        return 0.0 if difference == 0 else math.inf
    return difference / scale

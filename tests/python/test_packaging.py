"""The installed package: importable and usable without torch or a GPU, libcupti not linked."""
import os
import subprocess
import sys

import perfprof
from perfprof import _core

WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None  # any 'import torch' now fails
import perfprof
with perfprof.profile(schedule=perfprof.schedule(wait=0, active=1, repeat=1)) as prof:
    with perfprof.record_function("work"):
        pass
    prof.step()
print(sorted(r[0] for r in prof.trace.ranges()))
"""


def test_profiling_works_without_torch():
    result = subprocess.run([sys.executable, "-c", WITHOUT_TORCH], capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout.strip() == "['ProfilerStep#0', 'work']"


def test_core_module_does_not_link_cuda_libraries():
    result = subprocess.run(["ldd", _core.__file__], capture_output=True, text=True, check=True)
    linked = result.stdout.lower()
    for library in ("cupti", "cudart", "libcuda.so", "nvtoolsext", "libfmt", "torch"):
        assert library not in linked, f"{library} must not be a link-time dependency:\n{result.stdout}"


def test_version_and_public_names():
    assert perfprof.__version__ == "0.1.0"
    for name in perfprof.__all__:
        assert getattr(perfprof, name) is not None, name
    assert os.path.basename(os.path.dirname(perfprof.__file__)) == "perfprof"

#!/usr/bin/env bash
# Gathers, on this machine, what scripts/gpu_session.sh needs on the GPU machine, which reaches no
# network: the Debian packages of the build's headers and libraries (unpacked there, never
# installed) and wheels for its Python 3.12. They go into .gpu_session/, which git ignores
# (.git/info/exclude) and the device tool carries: run(..., carry=[".gpu_session"]).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.gpu_session
grep -qxF "/$dir/" .git/info/exclude 2>/dev/null || echo "/$dir/" >> .git/info/exclude
rm -rf "$dir" && mkdir -p "$dir"

# fmt (header-only use, but its CMake package checks its library exists), zlib, SQLite.
(cd "$dir" && apt-get download -q libfmt-dev libfmt9 zlib1g-dev zlib1g libsqlite3-dev libsqlite3-0 2>/dev/null)

# The CUPTI, CUDA, NVTX and NVML headers this machine builds against (its header wheels): the
# device's own CUPTI and CUDA are older than the 13.4 headers perfprof needs (its torch is a
# CUDA 13.0 build), and only the headers are used: its libcupti is the one loaded at run time.
headers=$(python3 -c "import nvidia, pathlib; print(next(p for root in nvidia.__path__
                      for p in pathlib.Path(root).glob('*/include') if (p / 'cupti.h').exists()))")
cp -r "$headers" "$dir/include"

# The device's image has torch (CUDA), CMake, pybind11, pytest, rich and click (KINDS.md); the
# trace readers of issue 11's item 5 (HolisticTraceAnalysis and TensorBoard's plugin, at the
# versions tests/python uses here) it lacks.
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$dir" HolisticTraceAnalysis==0.5.0 torch-tb-profiler==0.4.3 plotly==7.1.0 pydot ijson
du -sh "$dir"

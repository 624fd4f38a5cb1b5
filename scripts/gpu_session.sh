#!/usr/bin/env bash
# Issue 11's device check in one command, on the GPU machine: builds perfprof there from what
# scripts/prepare_gpu_session.sh gathered, then runs tests/gpu and the GPU overhead benchmark,
# every log under $OUT. Through the device tool, from the repository root:
#   run(command="bash scripts/gpu_session.sh", carry=[".gpu_session"], timeout_s=540)
# It stops at the first step that fails (the log says which); the tests and the benchmark each
# have a time limit inside the call's, so their logs come back even when they hang.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/perfprof-gpu}
mkdir -p "$out"
carried=.gpu_session
step() { echo "== $* ($(date +%T))" | tee -a "$out/session.log"; }

step "machine"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"; } \
  >> "$out/session.log" 2>&1

step "carried dependencies"
[[ -d $carried ]] || { echo "no $carried: run scripts/prepare_gpu_session.sh here first" | tee -a "$out/session.log"; exit 1; }
mkdir -p /tmp/deps && for deb in "$carried"/*.deb; do dpkg -x "$deb" /tmp/deps; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$carried"/*.whl \
  >> "$out/session.log" 2>&1 || { step "the carried wheels did not install"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD/python
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

step "build"
headers=$PWD/$carried/include  # CI's CUPTI, CUDA, NVTX and NVML headers (prepare_gpu_session.sh)
if ! { cmake -S . -B build/gpu -DCMAKE_BUILD_TYPE=Release -DPERFPROF_BUILD_PYTHON=ON -DPERFPROF_BUILD_TESTS=OFF \
         -DCMAKE_PREFIX_PATH=/tmp/deps/usr -DPython_EXECUTABLE="$(command -v python3)" \
         -DPERFPROF_CUPTI_INCLUDE_DIR="$headers" -DPERFPROF_CUDA_INCLUDE_DIR="$headers" \
         -DPERFPROF_CUDA_CRT_INCLUDE_DIR="$headers" -DPERFPROF_NVTX3_INCLUDE_DIR="$headers" \
         -DPERFPROF_NVML_INCLUDE_DIR="$headers" \
         -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" && cmake --build build/gpu -j"$(nproc)"; } \
       > "$out/build.log" 2>&1; then
  step "build failed"; tail -40 "$out/build.log"; exit 1
fi
grep -E "^PERFPROF_.*_INCLUDE_DIR" build/gpu/CMakeCache.txt >> "$out/session.log"
ln -sf "$PWD"/build/gpu/_core.*.so python/perfprof/

step "status"
python3 -c "
import json, perfprof
print(json.dumps(perfprof.cuda_status(), indent=1))
print(json.dumps(perfprof.nvml_status()))
print([group.value for group in perfprof.supported_gpu_metrics()])" >> "$out/session.log" 2>&1

step "tests/gpu"
PYTHONUNBUFFERED=1 timeout 300 python3 -m pytest -p no:cacheprovider -rA tests/gpu > "$out/gpu_tests.log" 2>&1
echo "pytest exit code $?" >> "$out/session.log"

step "benchmarks/bench_gpu_overhead.py"
PYTHONUNBUFFERED=1 timeout 120 python3 benchmarks/bench_gpu_overhead.py > "$out/bench_gpu_overhead.log" 2>&1
echo "benchmark exit code $?" >> "$out/session.log"

step "done"
tail -25 "$out/gpu_tests.log"
tail -15 "$out/bench_gpu_overhead.log"
cat "$out/session.log"

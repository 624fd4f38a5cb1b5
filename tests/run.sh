#!/usr/bin/env bash
# The whole test suite: the C++ core under GoogleTest (ctest), then the Python package (pytest).
# Needs the dependencies of `scripts/install-deps.sh --test`.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build/tests
cmake -S . -B "$build_dir" -DPERFPROF_BUILD_PYTHON=OFF -DPERFPROF_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j"$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure

# The C++ tests and the capture fuzz test once more under AddressSanitizer and UBSan: its corpus,
# the defects' tests and 2,000 mutated captures (the 20,000 above run without them).
asan_dir=build/asan
cmake -S . -B "$asan_dir" -DPERFPROF_BUILD_PYTHON=OFF -DPERFPROF_BUILD_TESTS=ON -DPERFPROF_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$asan_dir" -j"$(nproc)" --target perfprof_cpp_tests perfprof_capture_fuzz
# A larger stack: std::regex (the HTML tests' checks) recurses, and ASan's frames are larger.
# alloc_dealloc_mismatch: libstdc++ 12's std::stable_sort frees its nothrow-new buffer in a way
# ASan takes for a mismatch.
(cd "$asan_dir/tests/cpp" && ulimit -s 262144 && export ASAN_OPTIONS=alloc_dealloc_mismatch=0 &&
  ./perfprof_cpp_tests && PERFPROF_FUZZ_CASES=2000 ./perfprof_capture_fuzz)

python3 -m pytest tests/python tests/gpu

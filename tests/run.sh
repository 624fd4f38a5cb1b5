#!/usr/bin/env bash
# The whole test suite: the C++ core under GoogleTest (ctest), then the Python package (pytest).
# Needs the dependencies of `scripts/install-deps.sh --test`.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build/tests
cmake -S . -B "$build_dir" -DPERFPROF_BUILD_PYTHON=OFF -DPERFPROF_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j"$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure

python3 -m pytest tests/python tests/gpu

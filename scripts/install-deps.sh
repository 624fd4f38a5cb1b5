#!/usr/bin/env bash
# Installs what building and running perfprof needs on a fresh Debian machine, then perfprof.
#   scripts/install-deps.sh          runtime: fmt, zlib and SQLite headers, PyTorch (CPU), perfprof with plotting,
#                                    cluster analysis and the web pages (perfprof ui, perfprof report)
#   scripts/install-deps.sh --test   also GoogleTest, Chromium, the sqlite3 tool and the Python test dependencies
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
[[ "${1:-}" == "--test" ]] && with_tests=1

libraries=(libfmt-dev zlib1g-dev libsqlite3-dev)
# chromium: headless screenshots of the HTML plots (tests/python/chromium_check.py) and the browser
# that tests/python/test_ui.py drives through Playwright.
((with_tests)) && libraries+=(libgtest-dev chromium sqlite3)
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
missing=()
for package in "${libraries[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
# Tools may come from elsewhere (cmake from pip, a newer compiler): only install what is absent.
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
if ((${#missing[@]})); then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

python3 -m pip install -q --upgrade pip
# Pinned: an unpinned torch would pull the CUDA build and its gigabytes of wheels.
python3 -m pip install -q torch==2.13.0
# plot: matplotlib and PyYAML, for perfprof plot and the demo's auto-plot; cluster: DuckDB and Dask;
# ui: Flask, Jinja2 and plotly, for perfprof ui and perfprof report.
if ((with_tests)); then
  python3 -m pip install -q ".[test,plot,cluster,ui]"
else
  python3 -m pip install -q ".[plot,cluster,ui]"
fi

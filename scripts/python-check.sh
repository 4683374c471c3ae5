#!/usr/bin/env bash
# The Python package's tests: a fresh venv (in target/, so a clean checkout starts
# clean), the package built and installed from python/ by pip (maturin, release mode),
# then pytest over python/tests (vectors, properties, buffers, zero copy, leaks).
# Pinned test tools; the package itself needs nothing but Rust and Python >= 3.9.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$(pwd)/target}
venv=$target/python-venv
python3 -m venv --clear "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    'maturin==1.16.0' 'pytest==9.2.0' 'hypothesis==6.170.17' 'numpy==2.4.6'
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check ./python
# From outside the source tree, so the installed wheel is what is tested.
cd python/tests
"$venv/bin/python" -m pytest -q -p no:cacheprovider .

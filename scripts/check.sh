#!/usr/bin/env bash
# The one command that runs every check of the project: Rust tests (including the
# vector conformance suite), the no_std proofs, Miri, fuzzing, the C ABI header
# freshness, the C/C++ examples, the installed library and the bare-metal build. It
# first installs what it needs (scripts/install-deps.sh; MEMBRANE_NO_INSTALL=1 skips
# that). Each step prints a banner; the last line is `check: N passed, N failed`. A
# step that cannot run here FAILS or says so loudly, with the command that installs
# what it lacks — it is never counted as a pass.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

. scripts/lib/steps.sh
notices=()

# loud WHAT [HOW]: a step that could not run, and the command that makes it run.
loud() {
    local what=$1 how=${2:-}
    [ -n "$how" ] && what="$what -- install with: $how"
    notices+=("$what")
    echo
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!!! NOT RUN: $what"
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
}

if [ "${MEMBRANE_NO_INSTALL:-0}" != 1 ]; then
    echo "=================== installing what the checks need (scripts/install-deps.sh)"
    bash scripts/install-deps.sh
fi

vectors=${MEMBRANE_VECTORS:-$(pwd)/../shared/vectors}
if [ ! -f "$vectors/frames.jsonl" ]; then
    loud "conformance vectors not found at $vectors (set MEMBRANE_VECTORS); the vector tests below will FAIL"
fi
export MEMBRANE_VECTORS=$vectors

if command -v rustfmt >/dev/null 2>&1; then
    step "rustfmt" cargo fmt --all -- --check
else
    loud "rustfmt is not installed: formatting not checked" "rustup component add rustfmt"
fi
step "clippy (all targets, warnings are errors)" cargo clippy --workspace --all-targets -- -D warnings
# --no-fail-fast: one failing test binary does not keep the others from running.
step "cargo test (lib, integration, vectors, properties, doc)" cargo test --workspace --no-fail-fast
step "cargo test --no-default-features --features error-text (core without std)" \
    cargo test --no-default-features --features error-text --lib
# A firmware leaves the error texts out: the errors keep every other part.
step "cargo test --no-default-features error:: (errors without their texts)" \
    cargo test --no-default-features --lib --quiet error::
# Without the canonical fast path (as a firmware builds it) every identity goes through
# the flat reader: the vectors, hostile inputs and mutations give the same verdicts.
step "cargo test without fast-identity (integration tests, identities by the flat reader)" \
    cargo test --no-default-features --features std,error-text -p membrane-frame --tests --no-fail-fast --quiet
step "benchmarks compile" cargo bench --no-run
step "docs: cargo doc --workspace without warnings" env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# The docs tell the current truth: every measured block names its date, CPU and command
# (scripts/docs-figures.py writes them), and nothing in the tree speaks of the sessions
# it was built in (pytest's fixture scope is the one such word that is an API).
docs_current() {
    python3 scripts/docs-figures.py --check || return 1
    local hits
    hits=$(git grep -n -i -w -e "sessions*" -- . ':!scripts/check.sh' | grep -v 'scope="session"')
    [ -z "$hits" ] && return 0
    echo "about how the code was built, not what it is:"
    echo "$hits"
    return 1
}
step "docs: measured figures carry their command; no word of how the code was built" docs_current

# no_std, proof 1: the core builds for a bare-metal target that has no std at all.
if rustup target list --installed 2>/dev/null | grep -qx thumbv7em-none-eabihf ||
    rustup target add thumbv7em-none-eabihf >/dev/null 2>&1; then
    step "no_std: core builds for thumbv7em-none-eabihf" \
        cargo rustc --lib --no-default-features --target thumbv7em-none-eabihf --crate-type rlib
else
    loud "rustup cannot add thumbv7em-none-eabihf here: the bare-metal no_std build did not run (the host no_std link below still runs)" "rustup target add thumbv7em-none-eabihf"
fi
# no_std, proof 2: the core links into a #![no_std] host program with its own panic
# handler, and the program's verdicts are right.
step "no_std: freestanding host program links and runs" \
    bash -c 'cd nostd-check && CARGO_TARGET_DIR=../target/nostd cargo run --release --quiet'
# Panic freedom: the read/verify paths link into a #![no_std] LTO program whose panic
# handler calls an undefined symbol, so a reachable panic fails the link
# (docs/reliability.md); the program then runs over every vector.
step "panic-free: read/verify paths link with a panic handler that does not exist" bash scripts/panic-check.sh
# The same proof for the C library without std: every function of the header, linked
# with --gc-sections, reaches no panic (so the no_std panic boundary is a plain call).
step "panic-free: every C entry point of the no_std C library" bash scripts/ffi-panic-check.sh
# The panic-free float conversion equals str::parse::<f64> bit for bit on 2 million
# generated tokens, hard cases included (optimised: about half a minute). Built with the
# bench profile, whose library the "benchmarks compile" step above has built.
step "float conversion = str::parse::<f64> on 2 000 000 tokens (optimised)" \
    env FLOAT_CASES=2000000 cargo test --profile bench --quiet --test float_parse

# Miri over the core's unit tests, where the toolchain has it.
if cargo +nightly miri --version >/dev/null 2>&1; then
    step "miri: core unit tests" env MIRIFLAGS=-Zmiri-strict-provenance cargo +nightly miri test --lib --quiet
    # The C ABI crate's tests: its unit tests and every entry point called through raw
    # pointers, as a C caller would (ffi/tests/no_alloc.rs, a module of its test build).
    step "miri: C ABI (ffi/: every entry point through raw pointers)" \
        env MIRIFLAGS=-Zmiri-strict-provenance cargo +nightly miri test --quiet -p membrane-frame-ffi --lib
else
    loud "no nightly toolchain with Miri here: undefined-behaviour check did not run" "rustup component add --toolchain nightly miri rust-src"
fi

# Fuzzing smoke run: every cargo-fuzz target for 20 s, two at a time (about three
# minutes with the build). The longer campaign is recorded in docs/reliability.md.
if cargo +nightly fuzz --version >/dev/null 2>&1; then
    step "fuzz: every cargo-fuzz target, 20 s each (seeded from the vectors)" bash scripts/fuzz.sh 20 2
else
    loud "cargo-fuzz or nightly is missing: the fuzz targets did not run" "cargo install cargo-fuzz --locked --version 0.13.1"
fi

if [ -f c-examples/Makefile ]; then
    step "C and C++ examples (Makefile, CMake, sanitizers, valgrind, C vector tests, install + consumers)" \
        make -C c-examples check
else
    loud "c-examples/Makefile is missing: the C ABI was not exercised"
fi
# A real engine: the pinned llama.cpp built once per machine (cached), two tiny models
# made here, its KV state saved and restored through frames.
if command -v cmake >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1; then
    step "llama.cpp integration: save/restore through v5 frames in a real llama.cpp (integrations/llama.cpp/check.sh)" \
        bash integrations/llama.cpp/check.sh
else
    loud "cmake or a C++ compiler is missing: the llama.cpp integration was not built or tested" "apt-get install cmake g++"
fi
# Other CPUs under QEMU user mode: aarch64, big-endian s390x, 32-bit armv7.
if command -v qemu-aarch64 >/dev/null 2>&1; then
    step "cross: core and C ABI tests on aarch64, s390x, armv7 under QEMU; C vector tests on aarch64 (scripts/cross-check.sh)" \
        bash scripts/cross-check.sh
else
    loud "qemu-user is missing: nothing was tested on aarch64, s390x or armv7" \
        "apt-get install qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu gcc-s390x-linux-gnu gcc-arm-linux-gnueabihf"
fi
if python3 -m venv --help >/dev/null 2>&1; then
    step "python: pip install ./python (PyO3 + maturin) and pytest python/tests" bash scripts/python-check.sh
    step "release: cargo package of the crates, the Python sdist installed alone, one version everywhere (scripts/release-check.sh)" \
        bash scripts/release-check.sh
else
    loud "python3 has no venv module: the Python package was not built or tested" "apt-get install python3-venv"
fi

# The no_std C library for a Cortex-M4F, run under QEMU over the frame vectors.
if command -v arm-none-eabi-gcc >/dev/null 2>&1 && command -v qemu-system-arm >/dev/null 2>&1; then
    step "bare metal: thumbv7em-none-eabihf library under qemu-system-arm (make -C c-examples baremetal-check)" \
        make -C c-examples baremetal-check
else
    loud "arm-none-eabi-gcc or qemu-system-arm is missing: the bare-metal check did not run" \
        "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
fi

# cargo-mutants on the core lines the last change touched (at most 8 mutants; last,
# because it mutates the checkout in place). The whole-core run: docs/reliability.md §6.
if command -v cargo-mutants >/dev/null 2>&1; then
    step "mutants: cargo-mutants on the core lines the last change touched (at most 8)" bash scripts/mutants.sh --changed 8
else
    loud "cargo-mutants is missing: no mutant was tested" "cargo install cargo-mutants --locked --version 27.1.0"
fi

echo
echo "=================== summary"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
for n in "${notices[@]}"; do echo "NOT RUN: $n"; done
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

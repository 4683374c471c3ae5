#!/usr/bin/env bash
# The llama.cpp integration's whole check: fetch the pinned llama.cpp source, build and
# install it (cached between runs on one machine), make two tiny same-shaped models,
# build the integration against it and this checkout, run its tests. The last line is
# `llama: N passed, M failed`.
#
#   bash integrations/llama.cpp/check.sh          # tests
#   bash integrations/llama.cpp/check.sh --bench  # also the benchmark (docs/performance.md)
#
# The cache (MEMBRANE_LLAMA_CACHE_DIR, default ~/.cache/membrane-frame/llama.cpp-<pin>)
# holds the source, its build and the model maker's venv; nothing in it is trusted: the
# sdist is checked against its SHA-256 when unpacked and ninja rebuilds what is stale.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# The llama.cpp this integration is tested with: the source llama-cpp-python vendors.
sdist_version=0.3.36
sdist_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
llama_commit=0c1e57098bba43ac29e6e3b677cdceebdd22334f

cache=${MEMBRANE_LLAMA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/membrane-frame/llama.cpp-$sdist_version}
work=$(mktemp -d "${TMPDIR:-/tmp}/membrane-llama.XXXXXX")
trap 'rm -rf "$work"' EXIT
bench=0
[ "${1:-}" = --bench ] && bench=1

STEP_PREFIX="llama: "
. "$root/scripts/lib/steps.sh"
finish() {
    echo "llama: $passed passed, $failed failed"
    [ "$failed" -eq 0 ] && exit 0 || exit 1
}

fetch() {
    local src=$cache/llama_cpp_python-$sdist_version/vendor/llama.cpp
    if [ -f "$cache/unpacked" ] && [ "$(cat "$cache/unpacked")" = "$sdist_sha256" ] &&
        [ -f "$src/include/llama.h" ]; then
        echo "source: $src (cached)"
        return 0
    fi
    mkdir -p "$cache"
    rm -rf "$cache/llama_cpp_python-$sdist_version" "$cache/unpacked"
    local tarball=$cache/llama_cpp_python-$sdist_version.tar.gz
    if [ ! -f "$tarball" ]; then
        # A venv's pip: Debian's python3 may have none. --no-binary for this package
        # only: with :all: pip builds cmake and ninja from source too.
        python3 -m venv "$work/pip" && "$work/pip/bin/pip" download --quiet --no-deps \
            --no-binary llama-cpp-python "llama-cpp-python==$sdist_version" -d "$cache" || return 1
    fi
    echo "$sdist_sha256  $tarball" | sha256sum -c --quiet || { rm -f "$tarball"; return 1; }
    tar -xzf "$tarball" -C "$cache" || return 1
    echo "$sdist_sha256" >"$cache/unpacked"
}

build_llama() {
    # The real path: the vendored tree's .git is a relative file, and through a symlink
    # ninja loops on "build.ninja still dirty".
    local src
    src=$(realpath "$cache/llama_cpp_python-$sdist_version/vendor/llama.cpp")
    local generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    if [ ! -f "$cache/build/CMakeCache.txt" ]; then
        cmake -S "$src" -B "$cache/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
            -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF \
            -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
            -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=ON \
            -DCMAKE_INSTALL_PREFIX="$cache/install" >"$cache/configure.log" 2>&1 ||
            { tail -30 "$cache/configure.log"; rm -rf "$cache/build"; return 1; }
    fi
    cmake --build "$cache/build" -j "$(nproc)" >"$cache/build.log" 2>&1 || { tail -30 "$cache/build.log"; return 1; }
    cmake --install "$cache/build" >"$cache/install.log" 2>&1 || { tail -30 "$cache/install.log"; return 1; }
    echo "llama.cpp installed in $cache/install"
}

make_models() {
    local src=$cache/llama_cpp_python-$sdist_version/vendor/llama.cpp
    # gguf-py as vendored in the pinned source, with what it imports (NumPy, PyYAML).
    if [ ! -x "$cache/venv/bin/python" ] || ! "$cache/venv/bin/python" -c 'import gguf, numpy' 2>/dev/null; then
        rm -rf "$cache/venv"
        python3 -m venv "$cache/venv" && "$cache/venv/bin/pip" install --quiet "$src/gguf-py" || return 1
    fi
    # Two models of one shape and one name; only their weights (the seed) differ.
    local seed
    for seed in 1 2; do
        "$cache/venv/bin/python" "$here/tools/make_model.py" \
            "$src/models/ggml-vocab-llama-spm.gguf" "$work/model-$seed.gguf" "$seed" || return 1
    done
}

build_integration() {
    cmake -S "$here" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$cache/install" \
        -DMEMBRANE_FRAME_CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" >"$work/configure.log" 2>&1 ||
        { cat "$work/configure.log"; return 1; }
    cmake --build "$work/build" -j "$(nproc)" 2>&1 | grep -v "^\[" || true
    [ -x "$work/build/test_membrane_llama" ]
}

# The test program's cases count one by one in the total.
run_tests() {
    local rc
    MEMBRANE_LLAMA_REVISION_CACHE="$work/revisions" "$work/build/test_membrane_llama" \
        "$work/model-1.gguf" "$work/model-2.gguf" "$work" | tee "$work/tests.log"
    rc=${PIPESTATUS[0]}
    local line
    line=$(grep -E '^tests: [0-9]+ passed, [0-9]+ failed$' "$work/tests.log" | tail -1)
    if [ -z "$line" ]; then
        echo "the test program ended without its summary line (exit $rc)"
        failed=$((failed + 1))
        return 1
    fi
    set -- $line
    passed=$((passed + $2))
    failed=$((failed + $4))
    [ "$rc" -eq 0 ] && [ "$4" -eq 0 ]
}

# The command-line tool end to end; each line: expected exit status, arguments.
run_tool() {
    local tool=$work/build/membrane-llama state=$work/tool.kv bad=$work/tool-bad.kv
    export MEMBRANE_LLAMA_REVISION_CACHE=$work/revisions
    local ok=0
    expect() {
        local want=$1
        shift
        "$tool" "$@" >"$work/tool.out" 2>&1
        local got=$?
        if [ "$got" -ne "$want" ]; then
            echo "membrane-llama $*: exit $got, expected $want"
            cat "$work/tool.out"
            ok=1
        fi
    }
    expect 0 identity "$work/model-1.gguf"
    expect 0 save "$work/model-1.gguf" "$state" --prompt "The quick brown fox" --layers-per-fragment 2
    expect 0 check "$work/model-1.gguf" "$state"
    expect 0 restore "$work/model-1.gguf" "$state" --direct --next " jumps"
    expect 1 check "$work/model-2.gguf" "$state"
    grep -q "model_revision" "$work/tool.out" || { echo "another model: no model_revision in the refusal"; ok=1; }
    cp "$state" "$bad"
    printf '\001' | dd of="$bad" bs=1 seek=5000 conv=notrunc status=none
    expect 1 restore "$work/model-1.gguf" "$bad"
    grep -q "trailer_mismatch" "$work/tool.out" || { echo "damaged copy: no trailer_mismatch in the refusal"; ok=1; }
    expect 2 save "$work/model-1.gguf" "$state"
    expect 3 restore "$work/model-1.gguf" "$work/no-such-file.kv"
    return $ok
}

run_bench() {
    MEMBRANE_LLAMA_REVISION_CACHE="$work/revisions" "$work/build/bench_membrane_llama" "$work/model-1.gguf" "$work"
}

step "fetch llama-cpp-python==$sdist_version (llama.cpp $llama_commit)" fetch || finish
step "build and install libllama (CPU, Release)" build_llama || finish
step "make two tiny same-shaped models (seeds 1 and 2)" make_models || finish
step "build the integration (library, tool, tests, benchmark)" build_integration || finish
echo
echo "=================== llama: tests (each case counts)"
run_tests && echo "------------------- ok: llama: tests" || echo "------------------- FAILED: llama: tests"
step "membrane-llama tool: identity, save, check, restore; refusals exit 1" run_tool
[ "$bench" = 1 ] && step "benchmark" run_bench
finish

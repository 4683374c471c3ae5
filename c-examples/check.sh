#!/bin/sh
# The C/C++ side of CI, run by `make -C c-examples check` (which sets ROOT, TARGET_DIR,
# MEMBRANE_VECTORS, CC, CXX, MAKE). Every step counts as passed or failed; a failing
# step prints the end of its log and the run goes on; the last line is
#   c-examples: N passed, M failed
# and the exit status is non-zero when anything failed. Logs: build/logs/.
#
# Steps: the Rust static and shared libraries (cargo, the static one reduced to the
# mbr_* symbols); every program with the Makefile (static, shared, ASan+UBSan) and with
# CMake; the header as C99, C11, C++17 (with and without exceptions) under -Wall
# -Wextra -Wpedantic -Werror; every C++ program by g++ and clang++ as C++17, 20 and 23;
# the compile-fail cases (code that would dangle, mix up typed numbers or drop a status
# must not compile); the static library's global symbols (the header's functions,
# nothing else) and a link beside a second Rust static library; every program run
# linked statically, linked to the shared library, under ASan+UBSan, and under valgrind
# memcheck (no errors, no leaks of any kind); the vector tests (frames; envelopes,
# compat hashes, migration: they need the vectors, a missing folder FAILS); the
# NULL-argument test and its coverage of every function in the header; a short run of
# the C++-against-C and read-out benchmarks; ctest; the repository as a CMake subproject
# (add_subdirectory, FetchContent); `make install` into a fresh prefix and consumers
# built against it through pkg-config and find_package, static and shared.
set -u
cd "$(dirname "$0")" || exit 1
unset MAKEFLAGS MFLAGS
: "${ROOT:?run through make check}" "${TARGET_DIR:?}" "${MEMBRANE_VECTORS:?}"
CC=${CC:-cc}
CXX=${CXX:-c++}
MAKE=${MAKE:-make}
BUILD=$PWD/build
LOGS=$BUILD/logs
RUN=$BUILD/run
LIB_DIR=$TARGET_DIR/release
WARN="-Wall -Wextra -Wpedantic -Werror"
VALGRIND="valgrind --quiet --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all --error-exitcode=1"
# Sanitizer runtime options (only the ASan/UBSan builds read them): leaks are errors.
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS UBSAN_OPTIONS
rm -rf "$LOGS" "$RUN"
mkdir -p "$LOGS" "$RUN"

passed=0
failed=0
started=$(date +%s)

# step NAME COMMAND...: run, log, count.
step() {
    name=$1
    shift
    log=$LOGS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.-' '_').log
    if "$@" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "PASS  $name"
    else
        rc=$?
        failed=$((failed + 1))
        echo "FAIL  $name (exit $rc; log: $log)"
        tail -n 25 "$log" | sed 's/^/        /'
    fi
}

# expect EXIT TEXT COMMAND...: the command exits with EXIT and prints TEXT.
expect() {
    want=$1
    text=$2
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ "$rc" -eq "$want" ] || { echo "exit $rc, expected $want"; return 1; }
    case $out in *"$text"*) ;; *) echo "output lacks '$text'"; return 1 ;; esac
}

# through_pipe FILE COMMAND...: the command reads FILE from a pipe.
through_pipe() {
    file=$1
    shift
    cat "$file" | "$@"
}

# run_programs LABEL BINDIR [RUNNER...]: every program of one build, run by RUNNER.
run_programs() {
    label=$1
    dir=$2
    shift 2
    frame=$RUN/$label.bin
    damaged=$RUN/$label-damaged.bin
    step "$label: emit_frame writes a tensor with writev" "$@" "$dir/emit_frame" "$frame" 24
    cp "$frame" "$damaged" 2>/dev/null && printf '\001' | dd of="$damaged" bs=1 seek=4000 conv=notrunc 2>/dev/null
    step "$label: validate_mmap verifies it in place" "$@" "$dir/validate_mmap" "$frame"
    step "$label: validate_mmap rejects a damaged copy" expect 2 trailer_mismatch "$@" "$dir/validate_mmap" "$damaged"
    step "$label: stream_verify through a pipe, 7-byte reads" through_pipe "$frame" "$@" "$dir/stream_verify" 7
    step "$label: stream_verify rejects a damaged copy" \
        expect 2 trailer_mismatch through_pipe "$damaged" "$@" "$dir/stream_verify" 3
    aligned=$RUN/$label-aligned.bin
    step "$label: emit_frame writes a page-aligned frame (align 4096)" "$@" "$dir/emit_frame" "$aligned" 24 4096
    step "$label: odirect_read verifies it, reading the payload with O_DIRECT where the filesystem allows" \
        expect 0 "ok: payload" "$@" "$dir/odirect_read" "$aligned" 64
    step "$label: odirect_read falls back to the page cache for an unaligned frame, and says why" \
        expect 0 "does not start on a 4096-byte boundary" "$@" "$dir/odirect_read" "$frame"
    step "$label: odirect_read rejects a damaged copy" expect 1 trailer_mismatch "$@" "$dir/odirect_read" "$damaged"
    step "$label: kv_engine exports and re-imports a KV block" "$@" "$dir/kv_engine"
    step "$label: test_aligned (payload_as over a mapped page-aligned frame, refused where misaligned)" \
        "$@" "$dir/test_aligned" "$RUN"
    step "$label: test_cpp (the C++ wrapper: no status call on success, errors, views, batch)" "$@" "$dir/test_cpp"
    step "$label: test_vectors (frames.jsonl through the C API)" "$@" "$dir/test_vectors" "$MEMBRANE_VECTORS"
    step "$label: test_envelopes (envelope, compat and migration vectors through the C API)" \
        "$@" "$dir/test_envelopes" "$MEMBRANE_VECTORS"
    step "$label: test_metadata (snapshot and gossip vectors through the C API)" \
        "$@" "$dir/test_metadata" "$MEMBRANE_VECTORS"
    step "$label: test_null_args" "$@" "$dir/test_null_args"
}

# The functions membrane_frame.h declares (through membrane_frame_core.h and
# membrane_frame_cluster.h), one per line.
header_functions() {
    cat "$ROOT/include/membrane_frame_core.h" "$ROOT/include/membrane_frame_cluster.h" |
        sed -n 's/^[A-Za-z].*[ *]\(mbr_[a-z0-9_]*\)(.*/\1/p' | sort -u
}

# Every function of the header is called by the C++ wrapper or named in its C-only list
# (and none is both).
cxx_coverage() {
    hpp=$ROOT/include/membrane_frame.hpp
    sed -n '/BEGIN C-ONLY/,/END C-ONLY/p' "$hpp" >"$BUILD/c-only.txt"
    sed '/BEGIN C-ONLY/,/END C-ONLY/d' "$hpp" >"$BUILD/wrapper-code.txt"
    wrapped=0
    c_only=0
    bad=0
    for f in $(header_functions); do
        in_code=$(grep -c "$f(" "$BUILD/wrapper-code.txt")
        in_list=$(grep -cw "$f" "$BUILD/c-only.txt")
        if [ "$in_code" -gt 0 ] && [ "$in_list" -gt 0 ]; then
            echo "both wrapped and listed as C-only: $f"
            bad=1
        elif [ "$in_code" -gt 0 ]; then
            wrapped=$((wrapped + 1))
        elif [ "$in_list" -gt 0 ]; then
            c_only=$((c_only + 1))
        else
            echo "neither wrapped nor listed as C-only: $f"
            bad=1
        fi
    done
    echo "$wrapped functions wrapped in C++, $c_only listed as C-only"
    [ "$bad" -eq 0 ]
}

# docs/c-abi.md names every function of the header (its function overview).
docs_coverage() {
    missing=""
    for f in $(header_functions); do
        grep -q "\`$f\`" "$ROOT/docs/c-abi.md" || missing="$missing $f"
    done
    [ -z "$missing" ] || { echo "not named in docs/c-abi.md:$missing"; return 1; }
    echo "docs/c-abi.md names all $(header_functions | wc -l) functions"
}

# The static library's global symbols are exactly the header's functions.
static_symbols() {
    nm -g --defined-only "$LIB_DIR/libmembrane_frame.a" | awk 'NF == 3 { print $3 }' | sort -u >"$BUILD/globals.txt"
    header_functions >"$BUILD/functions.txt"
    echo "$(wc -l <"$BUILD/globals.txt") global symbols in libmembrane_frame.a, $(wc -l <"$BUILD/functions.txt") functions in the header"
    diff "$BUILD/functions.txt" "$BUILD/globals.txt"
}

null_coverage() {
    functions=$(header_functions)
    missing=""
    for f in $functions; do
        grep -q "$f(" test_null_args.c || missing="$missing $f"
    done
    echo "$(echo "$functions" | wc -l) functions in membrane_frame.h (its two parts)"
    [ -z "$missing" ] || { echo "not exercised by test_null_args.c:$missing"; return 1; }
}

have_tools() {
    missing=""
    for tool in "$CC" "$CXX" g++ clang++ cmake pkg-config valgrind readelf; do
        command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
    done
    [ -z "$missing" ] || { echo "missing:$missing (run scripts/install-deps.sh)"; return 1; }
}

cmake_build() {
    cmake -S . -B "$BUILD/cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DMEMBRANE_FRAME_LIB_DIR="$LIB_DIR" -DMEMBRANE_VECTORS="$MEMBRANE_VECTORS" &&
        cmake --build "$BUILD/cmake" -j 2
}

ctest_run() {
    (cd "$BUILD/cmake" && ctest --output-on-failure -j 2)
}

# `make install` into a fresh prefix: the layout (headers in include/membrane_frame/,
# one .pc, the CMake package), then consumers built the two usual ways against it.
install_stage() {
    stage=$BUILD/stage
    rm -rf "$stage" "$BUILD/pkgconfig-bin" "$BUILD/consumer"
    mkdir -p "$BUILD/pkgconfig-bin"
    "$MAKE" --no-print-directory install PREFIX="$stage" || return 1
    for file in include/membrane_frame/membrane_frame.h include/membrane_frame/membrane_frame_core.h \
        include/membrane_frame/membrane_frame_cluster.h include/membrane_frame/membrane_frame.hpp \
        lib/libmembrane_frame.a lib/pkgconfig/membrane_frame.pc lib/cmake/membrane_frame/membrane_frameConfig.cmake \
        lib/cmake/membrane_frame/membrane_frameConfigVersion.cmake; do
        [ -f "$stage/$file" ] || { echo "not installed: $file"; return 1; }
    done
    # The shared library: the versioned file, the SONAME link to it, the development link.
    soname=$(readelf -d "$stage/lib/libmembrane_frame.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    echo "SONAME: ${soname:-none}"
    case $soname in libmembrane_frame.so.[0-9]*) ;; *) return 1 ;; esac
    [ -L "$stage/lib/$soname" ] && [ -f "$(readlink -f "$stage/lib/$soname")" ] || return 1
}

pkgconfig_build() {
    PKG_CONFIG_PATH=$stage/lib/pkgconfig
    export PKG_CONFIG_PATH
    echo "membrane_frame $(pkg-config --modversion membrane_frame): $(pkg-config --cflags --libs membrane_frame)"
    echo "  --static: $(pkg-config --static --libs membrane_frame)"
    # shellcheck disable=SC2046
    "$CC" -std=c99 $WARN -O2 validate_mmap.c $(pkg-config --cflags --libs membrane_frame) \
        -Wl,-rpath,"$(pkg-config --variable=libdir membrane_frame)" -o "$BUILD/pkgconfig-bin/validate_mmap_shared" &&
        "$CC" -static -std=c99 $WARN -O2 validate_mmap.c $(pkg-config --static --cflags --libs membrane_frame) \
            -o "$BUILD/pkgconfig-bin/validate_mmap_static" || return 1
    # The shared build really loads the installed library, by its SONAME; the static one
    # needs none.
    ldd "$BUILD/pkgconfig-bin/validate_mmap_shared" | grep "$stage/lib/libmembrane_frame.so" || return 1
    readelf -d "$BUILD/pkgconfig-bin/validate_mmap_shared" | grep -F "(NEEDED)" | grep -F "[$soname]" || return 1
    if readelf -d "$BUILD/pkgconfig-bin/validate_mmap_static" 2>/dev/null | grep -q "(NEEDED)"; then return 1; fi
    "$BUILD/pkgconfig-bin/validate_mmap_shared" "$RUN/static.bin" && "$BUILD/pkgconfig-bin/validate_mmap_static" "$RUN/static.bin"
}

cmake_consumer() {
    cmake -S consumer -B "$BUILD/consumer" -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS="$WARN" >"$BUILD/consumer.configure.log" 2>&1 || { cat "$BUILD/consumer.configure.log"; return 1; }
    grep "membrane_frame " "$BUILD/consumer.configure.log"
    cmake --build "$BUILD/consumer" -j 2 || return 1
    readelf -d "$BUILD/consumer/consumer_shared" | grep -F "(NEEDED)" | grep -F "[$soname]" || return 1
    if readelf -d "$BUILD/consumer/consumer_static" | grep -q "libmembrane_frame"; then return 1; fi
    "$BUILD/consumer/consumer_shared" "$RUN/static.bin" && "$BUILD/consumer/consumer_static" "$RUN/static.bin"
}

# membrane-frame as a CMake subproject (the repository's CMakeLists.txt): cargo runs
# inside the consumer's build. add_subdirectory builds the library from scratch in the
# consumer's build folder, as a new user's would; FetchContent shares the target folder.
subproject_build() {
    how=$1
    dir=$BUILD/subproject-$how
    rm -rf "$dir"
    set -- -DMEMBRANE_FRAME_SOURCE_DIR="$ROOT"
    [ "$how" = fetchcontent ] && set -- "$@" -DUSE_FETCHCONTENT=ON -DMEMBRANE_FRAME_CARGO_TARGET_DIR="$TARGET_DIR"
    cmake -S subproject -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" && cmake --build "$dir" -j 2 || return 1
    "$dir/kv_engine" | tail -n 1 && "$dir/validate_static" "$RUN/static.bin" >/dev/null &&
        "$dir/validate_shared" "$RUN/static.bin" >/dev/null || return 1
    nm -g --defined-only "$(find "$dir" "$TARGET_DIR/release" -maxdepth 4 -name libmembrane_frame.a | head -n 1)" |
        awk 'NF == 3 && $3 !~ /^mbr_/ { bad = 1; print "global:", $3 } END { exit bad }'
}

echo "c-examples: library $LIB_DIR, vectors $MEMBRANE_VECTORS"
if [ ! -f "$MEMBRANE_VECTORS/frames.jsonl" ]; then
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!!! CONFORMANCE VECTORS NOT FOUND at $MEMBRANE_VECTORS"
    echo "!!! Set MEMBRANE_VECTORS to the folder holding frames.jsonl. The vector steps"
    echo "!!! below FAIL rather than pass without checking anything."
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
fi

# Cross mode (make cross-check TARGET=... CROSS_CC=... CROSS_CXX=... RUNNER=...): the
# library built for another CPU, every program built by its cross compilers and run
# under RUNNER (QEMU user mode), and nothing else.
cross_lib() {
    upper=$(printf '%s' "$CROSS_TARGET" | tr 'a-z-' 'A-Z_')
    (cd "$ROOT" && env "CARGO_TARGET_${upper}_LINKER=$CROSS_CC" CARGO_TARGET_DIR="$TARGET_DIR" \
        cargo build --release -p membrane-frame-ffi --target "$CROSS_TARGET")
}
# The Makefile's own static builds (same programs, flags and --wrap options), with the
# cross compilers and the cross library, into their own folder.
cross_programs() {
    "$MAKE" --no-print-directory -j 2 static BUILD="$BUILD/cross-$CROSS_TARGET" CC="$CROSS_CC" CXX="$CROSS_CXX" \
        STATIC_LIB="$TARGET_DIR/$CROSS_TARGET/release/libmembrane_frame.a"
}
if [ -n "${CROSS_TARGET:-}" ]; then
    : "${CROSS_CC:?}" "${CROSS_CXX:?}" "${RUNNER:?}"
    step "cross $CROSS_TARGET: libmembrane_frame.a (cargo build --release --target $CROSS_TARGET)" cross_lib
    step "cross $CROSS_TARGET: every program, $CROSS_CC and $CROSS_CXX" cross_programs
    # shellcheck disable=SC2086
    run_programs "cross-$CROSS_TARGET" "$BUILD/cross-$CROSS_TARGET/static" $RUNNER
    echo "c-examples cross $CROSS_TARGET: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

step "tools: cc, c++, g++, clang++, cmake, pkg-config, valgrind, readelf" have_tools
step "cargo build --release -p membrane-frame-ffi (libmembrane_frame.a, .so)" "$MAKE" --no-print-directory lib
step "make: every program, static + shared + ASan/UBSan builds" "$MAKE" --no-print-directory -j 2 variants
step "make: the headers as C99, C11, C++17 (+ hpp, with and without exceptions), each part alone, and every earlier declaration kept (abi_check.c), -Werror" \
    "$MAKE" --no-print-directory headers
step "test_null_args.c calls every function of membrane_frame.h" null_coverage
step "membrane_frame.hpp wraps every function of the header or lists it as C-only" cxx_coverage
step "docs/c-abi.md names every function of the header" docs_coverage
step "nm: the static library's only global symbols are the header's mbr_* functions" static_symbols
step "link: libmembrane_frame.a and a second Rust static library in one program, both orders" \
    "$MAKE" --no-print-directory two-rust-libs
step "make: every C++ program and the header, g++ and clang++, C++17/20/23, -Werror" \
    "$MAKE" --no-print-directory -j 2 standards
for cxx in g++ clang++; do
    for std in c++17 c++20; do
        step "compile_fail: $cxx $std refuses each dangling form, enum mix-up and dropped status" \
            sh ./compile_fail.sh "$cxx" "$std" "$ROOT/include"
    done
done

run_programs static "$BUILD/static"
run_programs shared "$BUILD/shared"
run_programs asan "$BUILD/asan"
# shellcheck disable=SC2086
run_programs valgrind "$BUILD/static" $VALGRIND

step "bench_cpp: the C++ wrapper against the C calls (3 rounds here; make bench-cpp for figures)" \
    "$MAKE" --no-print-directory bench-cpp BENCH_ROUNDS=3
step "bench_readout: an envelope's fields read from C (3 rounds here; make bench-readout for figures)" \
    "$MAKE" --no-print-directory bench-readout BENCH_ROUNDS=3
step "cmake: configure and build (static + shared, -Werror)" cmake_build
step "cmake: ctest" ctest_run
step "cmake: add_subdirectory(membrane-frame) consumer, cargo building from scratch, C and C++, run" \
    subproject_build add_subdirectory
step "cmake: FetchContent consumer, run" subproject_build fetchcontent
step "install: make install into a fresh prefix (include/membrane_frame/, one .pc, CMake package, SONAME)" install_stage
step "install: pkg-config consumers, shared and --static, run" pkgconfig_build
step "install: find_package(membrane_frame CONFIG) consumers, shared and static, run" cmake_consumer

echo "c-examples: finished in $(($(date +%s) - started)) s"
echo "c-examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

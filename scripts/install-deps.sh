#!/usr/bin/env bash
# Install what the test command (scripts/check.sh) needs beyond a Rust toolchain, a C
# compiler and Python 3 — the same on a fresh machine, a developer's and CI:
#   Debian packages   cmake pkg-config valgrind clang (C/C++ checks), gcc-arm-none-eabi
#                     libnewlib-arm-none-eabi qemu-system-arm (bare-metal check),
#                     ninja-build (the llama.cpp build of integrations/llama.cpp),
#                     qemu-user and the aarch64, s390x and armhf cross gcc and libc
#                     (scripts/cross-check.sh)
#   Python packages   protobuf, grpcio-tools (tests/proto_interop.rs), pinned
#   rustup            the thumbv7em-none-eabihf, aarch64, s390x and armv7 Linux targets;
#                     nightly with miri and rust-src
#   cargo install     cargo-fuzz, cargo-mutants (pinned)
# Idempotent: each piece is checked first and installed only when missing. Nothing
# here fails the run: whatever cannot be installed is reported, and check.sh then says
# NOT RUN for the steps that need it, with the command that installs it.
set -uo pipefail
cd "$(dirname "$0")/.."

say() { echo "install-deps: $*"; }

# ---- Debian packages ----
apt_missing=()
need_tool() { command -v "$1" >/dev/null 2>&1 || apt_missing+=("$2"); }
need_tool cmake cmake
need_tool clang++ clang
need_tool pkg-config pkg-config
need_tool valgrind valgrind
need_tool arm-none-eabi-gcc gcc-arm-none-eabi
need_tool qemu-system-arm qemu-system-arm
need_tool ninja ninja-build
# Other CPUs under QEMU user mode: the emulators, the cross compilers, their C libraries.
need_tool qemu-aarch64 qemu-user
for gnu in aarch64-linux-gnu:arm64 s390x-linux-gnu:s390x arm-linux-gnueabihf:armhf; do
    need_tool "${gnu%%:*}-gcc" "gcc-${gnu%%:*}"
    [ -f "/usr/${gnu%%:*}/include/stdio.h" ] || apt_missing+=("libc6-dev-${gnu##*:}-cross")
done
need_tool aarch64-linux-gnu-g++ g++-aarch64-linux-gnu
# Debian's python3 needs python3-venv for the Python package's test venv.
python3 -m venv --help >/dev/null 2>&1 || apt_missing+=(python3-venv)
# GNU time (peak RSS in the CLI's memory tests); `command -v time` finds the shell keyword.
[ -x /usr/bin/time ] || apt_missing+=(time)
# newlib is a library, not a tool: look for its semihosting specs file.
[ -n "$(find /usr/lib/arm-none-eabi -name rdimon.specs -print -quit 2>/dev/null)" ] ||
    apt_missing+=(libnewlib-arm-none-eabi)
if [ ${#apt_missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${apt_missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    if command -v apt-get >/dev/null 2>&1 &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" \
            >/dev/null; then
        say "installed ${apt_missing[*]}"
    else
        say "could not install ${apt_missing[*]} (apt-get install ${apt_missing[*]})"
    fi
else
    say "Debian packages present (cmake, clang, pkg-config, valgrind, gcc-arm-none-eabi, newlib, qemu-system-arm, ninja, qemu-user, cross gcc)"
fi

# ---- Python packages (pinned) ----
if python3 -c 'import google.protobuf, grpc_tools' >/dev/null 2>&1; then
    say "Python protobuf and grpcio-tools present"
else
    say "installing Python protobuf==7.36.2 grpcio-tools==1.85.1"
    python3 -m pip install --quiet --disable-pip-version-check 'protobuf==7.36.2' 'grpcio-tools==1.85.1' ||
        say "could not install protobuf/grpcio-tools (python3 -m pip install protobuf==7.36.2 grpcio-tools==1.85.1)"
fi

# ---- rustup: the bare-metal and cross targets, nightly Miri ----
if command -v rustup >/dev/null 2>&1; then
    for target in thumbv7em-none-eabihf aarch64-unknown-linux-gnu s390x-unknown-linux-gnu armv7-unknown-linux-gnueabihf; do
        rustup target list --installed 2>/dev/null | grep -qx "$target" ||
            rustup target add "$target" >/dev/null 2>&1 ||
            say "could not add $target (rustup target add $target)"
    done
    if rustup toolchain list | grep -q '^nightly'; then
        if ! cargo +nightly miri --version >/dev/null 2>&1; then
            say "adding Miri to nightly"
            rustup component add --toolchain nightly miri rust-src >/dev/null 2>&1 ||
                say "could not add Miri (rustup component add --toolchain nightly miri rust-src)"
        fi
        # The sysroot Miri builds once; quiet when it is there.
        cargo +nightly miri setup >/dev/null 2>&1 || say "cargo +nightly miri setup failed"
    else
        say "no nightly toolchain: Miri and fuzzing cannot run (rustup toolchain install nightly)"
    fi
else
    say "no rustup: cannot add the bare-metal target or Miri"
fi

# ---- cargo subcommands (pinned) ----
# cargo_tool NAME VERSION: `cargo install NAME` at VERSION unless `cargo NAME` (without
# the `cargo-` prefix) already runs.
cargo_tool() {
    local name=$1 version=$2
    if cargo "${name#cargo-}" --version >/dev/null 2>&1; then
        say "$name present"
    else
        say "installing $name $version"
        cargo install --quiet "$name" --locked --version "$version" ||
            say "could not install $name (cargo install $name --locked --version $version)"
    fi
}
cargo_tool cargo-fuzz 0.13.1
cargo_tool cargo-mutants 27.1.0
exit 0

#!/bin/sh
# Install what `make -C c-examples check` needs besides Rust, if it is missing:
# a C and C++ compiler, make, cmake, pkg-config, valgrind. Idempotent: installs
# nothing when every tool is already there. Debian/Ubuntu (apt-get), run as root.
set -eu
missing=""
need() { command -v "$1" >/dev/null 2>&1 || missing="$missing $2"; }
need cc gcc
need c++ g++
need make make
need cmake cmake
need pkg-config pkg-config
need valgrind valgrind
if [ -z "$missing" ]; then
    echo "install-deps: cc, c++, make, cmake, pkg-config and valgrind are present"
    exit 0
fi
echo "install-deps: installing$missing"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: no apt-get here; install$missing by hand" >&2
    exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing

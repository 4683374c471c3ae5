#!/usr/bin/env bash
# What a release needs, checked without publishing anything:
#   1. `cargo package` of the core, the C ABI crate and the CLI: each packaged crate
#      (its path dependencies replaced by versioned ones) builds on its own;
#   2. `maturin sdist` of the Python package, then `pip install` of that sdist alone in
#      a fresh venv, and an import;
#   3. one version everywhere: the four Cargo.toml files, pyproject.toml, the installed
#      Python package's __version__, the installed C library (pkg-config, mbr_version(),
#      the header's MBR_VERSION_STRING) and a section of CHANGELOG.md.
# The last line is `release: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
target=${CARGO_TARGET_DIR:-$(pwd)/target}
work=$target/release-check
rm -rf "$work"
mkdir -p "$work"
STEP_PREFIX="release: "
. scripts/lib/steps.sh

# The package version a manifest (Cargo.toml, pyproject.toml) states: its first `version = "..."`.
manifest_version() { sed -n 's/^version = "\(.*\)"$/\1/p' "$1" | head -n 1; }
version=$(manifest_version Cargo.toml)
echo "release: the core's Cargo.toml says $version"

# A working tree with uncommitted changes (a developer's) is packaged as it is; CI
# packages a clean checkout.
dirty=()
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
    echo "release: the working tree has uncommitted changes; packaging it as it is (--allow-dirty)"
    dirty=(--allow-dirty)
fi

# The three crates together, so the C ABI crate and the CLI build against the packaged
# core, not the checkout. Cargo builds them from a temporary local registry and never
# extracts a crate version again once it has: every run before a release has the same
# version number, so without removing the extractions an earlier run left, the C ABI
# crate and the CLI would be built against the core as that run packaged it.
package_crates() {
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/membrane-frame-*
    cargo package "${dirty[@]}" --locked -p membrane-frame -p membrane-frame-ffi -p membrane-frame-cli || return 1
    for crate in membrane-frame membrane-frame-ffi membrane-frame-cli; do
        [ -f "$target/package/$crate-$version.crate" ] || { echo "no $crate-$version.crate"; return 1; }
    done
    # The core's package holds the library and its documents, nothing of the workspace.
    local listing
    listing=$(tar -tzf "$target/package/membrane-frame-$version.crate") || return 1
    echo "membrane-frame-$version.crate: $(wc -l <<<"$listing") files"
    for unwanted in ffi/ cli/ python/ integrations/ c-examples/ fuzz/ target/; do
        if grep -q "^membrane-frame-$version/$unwanted" <<<"$listing"; then
            echo "the core's package contains $unwanted"
            return 1
        fi
    done
}

python_sdist() {
    local venv=$work/venv
    python3 -m venv --clear "$work/build-venv" || return 1
    "$work/build-venv/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin==1.16.0' || return 1
    "$work/build-venv/bin/maturin" sdist --manifest-path python/Cargo.toml --out "$work/sdist" || return 1
    local sdist
    sdist=$(ls "$work"/sdist/membrane_frame-"$version".tar.gz) || return 1
    echo "sdist: $sdist ($(tar -tzf "$sdist" | wc -l) files)"
    # Installed from the sdist alone: a fresh venv, built outside the checkout.
    python3 -m venv --clear "$venv" || return 1
    (cd "$work" && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$sdist") || return 1
    installed=$(cd "$work" && "$venv/bin/python" -c 'import membrane_frame as m; m.PayloadIdentity; print(m.__version__)') || return 1
    echo "installed from the sdist: membrane_frame $installed"
}

# The same version wherever one is written or reported.
versions_agree() {
    local stage=$work/stage
    make --no-print-directory -C c-examples install PREFIX="$stage" >"$work/install.log" 2>&1 || { cat "$work/install.log"; return 1; }
    cat >"$work/version.c" <<'EOF'
#include <stdio.h>
#include <membrane_frame.h>
int main(void) {
    printf("%s %s\n", mbr_version(), MBR_VERSION_STRING);
    return 0;
}
EOF
    # shellcheck disable=SC2046
    cc -std=c99 "$work/version.c" $(PKG_CONFIG_PATH=$stage/lib/pkgconfig pkg-config --cflags --libs membrane_frame) \
        -Wl,-rpath,"$stage/lib" -o "$work/version" || return 1
    local c_versions
    read -r -a c_versions < <("$work/version") || return 1
    local ok=0
    agree() {
        if [ "$2" = "$version" ]; then
            printf '  %-46s %s\n' "$1" "$2"
        else
            printf '  %-46s %s   <- differs from %s\n' "$1" "$2" "$version"
            ok=1
        fi
    }
    for manifest in ffi/Cargo.toml cli/Cargo.toml python/Cargo.toml python/pyproject.toml; do
        agree "$manifest" "$(manifest_version "$manifest")"
    done
    agree "membrane_frame.__version__ (from the sdist)" "${installed:-not installed}"
    agree "pkg-config --modversion membrane_frame" "$(PKG_CONFIG_PATH=$stage/lib/pkgconfig pkg-config --modversion membrane_frame)"
    agree "mbr_version() of the installed shared library" "${c_versions[0]:-}"
    agree "MBR_VERSION_STRING of the installed header" "${c_versions[1]:-}"
    agree "CHANGELOG.md, newest version" "$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' CHANGELOG.md | head -n 1)"
    grep -q '^## Unreleased$' CHANGELOG.md || { echo "  CHANGELOG.md has no '## Unreleased' section"; ok=1; }
    return $ok
}

step "cargo package: core, C ABI crate, CLI (each packaged crate built on its own)" package_crates
step "maturin sdist, pip install of the sdist in a fresh venv" python_sdist
step "one version in the manifests, the installed Python and C packages, the changelog" versions_agree

for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "release: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

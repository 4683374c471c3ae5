#!/usr/bin/env bash
# cargo-mutants over the core: each mutant (a function body replaced, a comparison
# flipped, a `!` deleted) must make a test fail. `.cargo/mutants.toml` says what is
# mutated, which tests judge a mutant and the timeouts; results: docs/reliability.md §6.
#
#   scripts/mutants.sh FILE...        the mutants in these files (src/frame/header.rs ...)
#   scripts/mutants.sh --all          every core file: the long campaign (hours on 2
#                                     cores; shard it with MUTANTS_SHARD=k/n)
#   scripts/mutants.sh --changed [N]  the CI step: the mutants on the core lines the last
#                                     change touched (against the merge base with
#                                     origin/main, or HEAD~1 on main itself), at most N
#                                     of them (default 8; more are sampled by --shard,
#                                     the shard picked by the commit)
#
# FILE... and --all run two passes: cargo-nextest judges every mutant (a hang is ended
# by its per-test limit), then `cargo test` re-judges the ones it missed or timed out,
# doc tests included. MUTANTS_RESUME=1 skips the mutants an earlier run in the same
# output folder, or the committed record (MUTANTS_RECORD, default
# docs/mutants-record.tsv), caught or found unviable (cargo mutants --iterate), so a
# long run can go on where it stopped, on this machine or another (each earlier run is
# kept in history/ of the output folder; scripts/mutants-summary.py makes the table of
# docs/reliability.md from them, and --write-record updates the record).
# --changed runs `cargo test` only (CI has no cargo-nextest).
#
# Exits non-zero if a mutant was missed (no test failed) or timed out. Output:
# ${MUTANTS_OUT:-target/mutants-out}/mutants.out/ (caught.txt, missed.txt, ...); the
# nextest pass's own record, when a re-judging pass follows, in history/ beside it.
set -uo pipefail
cd "$(dirname "$0")/.."

out=${MUTANTS_OUT:-target/mutants-out}
record=${MUTANTS_RECORD:-docs/mutants-record.tsv}
vectors=${MEMBRANE_VECTORS:-$(pwd)/../shared/vectors}
export MEMBRANE_VECTORS=$vectors
if ! command -v cargo-mutants >/dev/null; then
    echo "cargo-mutants is not installed: cargo install cargo-mutants --locked --version 27.1.0" >&2
    exit 1
fi
mkdir -p "$out"

# Both passes over the mutants named by "$@" (cargo-mutants file/shard arguments).
two_passes() {
    if ! command -v cargo-nextest >/dev/null; then
        echo "cargo-nextest is not installed (cargo install cargo-nextest --locked)" >&2
        exit 1
    fi
    resume=()
    if [ "${MUTANTS_RESUME:-0}" = 1 ]; then
        resume=(--iterate)
        # cargo-mutants keeps one earlier output (mutants.out.old): keep every run here.
        if [ -d "$out/mutants.out" ]; then
            mkdir -p "$out/history"
            cp -r "$out/mutants.out" "$out/history/$(date -u +%Y%m%dT%H%M%S)"
        fi
        # The committed record's caught and unviable mutants are skipped too, so the
        # run goes on where an earlier run (on another machine) stopped.
        if [ -f "$record" ]; then
            mkdir -p "$out/mutants.out"
            { cat "$out/mutants.out/previously_caught.txt" 2>/dev/null
              awk -F '\t' '$1 == "caught" || $1 == "unviable" { print $3 }' "$record"
            } | sort -u >"$out/previously_caught.tmp"
            mv "$out/previously_caught.tmp" "$out/mutants.out/previously_caught.txt"
            echo "mutants: $(wc -l <"$out/mutants.out/previously_caught.txt") caught or unviable in earlier runs ($record and $out) are skipped"
        fi
    fi
    cargo mutants -j "${JOBS:-1}" -o "$out" "${resume[@]}" "$@"
    status=$?
    case $status in
    0) return 0 ;;
    2|3) ;; # missed or timed out: re-judged below
    *) return $status ;;
    esac
    # The re-judging pass replaces mutants.out: keep the nextest pass's record.
    mkdir -p "$out/history"
    cp -r "$out/mutants.out" "$out/history/$(date -u +%Y%m%dT%H%M%S)-nextest"
    # Exactly those mutants, by name (regex metacharacters escaped as regex::escape does).
    names=()
    while IFS= read -r name; do
        names+=(-F "^$(printf '%s' "$name" | sed 's/[][\\.+*?(){}|^$#&~-]/\\&/g')\$")
    done < <(cat "$out/mutants.out/missed.txt" "$out/mutants.out/timeout.txt")
    echo "mutants: re-judging the $((${#names[@]} / 2)) that nextest missed or timed out with cargo test (doc tests included)"
    cargo mutants -j "${JOBS:-1}" -o "$out" --iterate --test-tool cargo "${names[@]}"
}

case "${1:-}" in
--all)
    two_passes ${MUTANTS_SHARD:+--shard "$MUTANTS_SHARD"}
    ;;
--changed)
    most=${2:-8}
    base=$(git merge-base HEAD origin/main 2>/dev/null || true)
    if [ -z "$base" ] || [ "$base" = "$(git rev-parse HEAD)" ]; then
        base=$(git rev-parse --verify --quiet HEAD~1) || {
            echo "!!! NOT RUN: no commit before HEAD in this checkout (a shallow clone?): no change to mutate"
            exit 0
        }
    fi
    diff="$out/change.diff"
    git diff "$base" HEAD -- src >"$diff"
    count=$(cargo mutants --in-diff "$diff" --list 2>/dev/null | wc -l)
    echo "mutants: $count on the core lines changed since $(git rev-parse --short "$base")"
    if [ "$count" -eq 0 ]; then
        exit 0
    fi
    shard=()
    if [ "$count" -gt "$most" ]; then
        shards=$(((count + most - 1) / most))
        pick=$((0x$(git rev-parse --short=7 HEAD) % shards))
        shard=(--shard "$pick/$shards")
        echo "mutants: testing shard $pick/$shards (about $most of them)"
    fi
    # The tests passed on the unmutated tree in an earlier step; the tree is a
    # throwaway checkout, so it is mutated in place (one mutants-profile build, ~100 s,
    # then about 4 s a mutant).
    exec cargo mutants --in-diff "$diff" --test-tool cargo --baseline skip --timeout 150 --in-place -o "$out" "${shard[@]}"
    ;;
""|-h|--help)
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
*)
    args=()
    for file in "$@"; do args+=(--file "$file"); done
    two_passes "${args[@]}"
    ;;
esac

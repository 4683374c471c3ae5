#!/bin/sh
# Compile compile_fail.cpp once without a case (it must compile) and once per
# MBR_CASE_* (each must fail, with the diagnostic its "// expect:" names), under one
# compiler and one language standard, with the project's warning flags and -Werror.
#
#   usage: compile_fail.sh CXX STD INCLUDE_DIR      e.g. compile_fail.sh clang++ c++20 ../include
#   last line: "compile_fail CXX STD: N cases refused as expected, M not"; exit 1 if M > 0
set -u
cxx=$1
std=$2
include=$3
cd "$(dirname "$0")" || exit 1
flags="-std=$std -Wall -Wextra -Wpedantic -Werror -I$include -fsyntax-only"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# shellcheck disable=SC2086
if ! "$cxx" $flags compile_fail.cpp >"$log" 2>&1; then
    echo "FAIL  the control (no case defined) does not compile:"
    sed 's/^/        /' "$log" | head -n 30
    exit 1
fi
echo "ok    the control compiles"

refused=0
not=0
# Each case line: '#if defined(MBR_CASE_X) // expect: KIND' or '#elif defined(...) // expect: KIND';
# its block runs to the next #elif or #else. The error must be reported inside it (or,
# for a C macro, g++'s "in expansion of macro" note must point inside it).
cases=$(sed -n 's/^#\(el\)\{0,1\}if defined(\(MBR_CASE_[A-Z_0-9]*\)) \/\/ expect: \([a-z]*\)$/\2:\3/p' compile_fail.cpp)
[ -n "$cases" ] || { echo "FAIL  no cases found in compile_fail.cpp"; exit 1; }
for entry in $cases; do
    name=${entry%%:*}
    kind=${entry#*:}
    case $kind in
    deleted) want='deleted' ;;
    convert) want='cannot convert|could not convert|no viable conversion|no matching|invalid conversion|no known conversion|no match for|cannot initialize|incompatible type|invalid operands' ;;
    discard) want='ignoring return value|unused-result|nodiscard' ;;
    *) echo "FAIL  $name: unknown expectation '$kind'"; not=$((not + 1)); continue ;;
    esac
    first=$(grep -n "defined($name)" compile_fail.cpp | cut -d: -f1)
    last=$(awk -v from="$first" 'NR > from && /^#(elif|else)/ { print NR - 1; exit }' compile_fail.cpp)
    # shellcheck disable=SC2086
    if "$cxx" $flags -D"$name" compile_fail.cpp >"$log" 2>&1; then
        echo "FAIL  $name compiles (it must not)"
        not=$((not + 1))
    elif grep -Eq "$want" "$log" &&
        sed -n 's/^compile_fail\.cpp:\([0-9]*\):[0-9]*: \(error:\|note: in expansion of macro\).*/\1/p' "$log" |
        awk -v a="$first" -v b="$last" '$1 > a && $1 <= b { found = 1 } END { exit !found }'; then
        echo "ok    $name refused ($kind)"
        refused=$((refused + 1))
    else
        echo "FAIL  $name refused, but not for the expected reason ($kind):"
        sed 's/^/        /' "$log" | head -n 12
        not=$((not + 1))
    fi
done
echo "compile_fail $cxx $std: $refused cases refused as expected, $not not"
[ "$not" -eq 0 ]

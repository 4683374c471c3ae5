# Counted steps for the check scripts (sourced). `step NAME COMMAND...` runs the
# command between a banner and an ok/FAILED line with its seconds, counts it in
# `passed` or `failed` (the failed names in `failures`) and returns its success.
# STEP_PREFIX labels a script's banners when another script's output surrounds them.
passed=0
failed=0
failures=()

step() {
    local name=$1 start=$SECONDS
    shift
    echo
    echo "=================== ${STEP_PREFIX:-}$name"
    if "$@"; then
        passed=$((passed + 1))
        echo "------------------- ok: ${STEP_PREFIX:-}$name ($((SECONDS - start)) s)"
        return 0
    fi
    failed=$((failed + 1))
    failures+=("$name")
    echo "------------------- FAILED: ${STEP_PREFIX:-}$name ($((SECONDS - start)) s)"
    return 1
}

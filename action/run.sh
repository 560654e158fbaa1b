#!/usr/bin/env bash
# git-sage action, step "explain": `git sage blame-origin` over every result of the scanner's
# report (or the confirmed findings kept under .sage/findings/), writing sage.sarif and
# origin.md. The step itself never fails: its exit code goes to the step's outputs and
# action/verdict.sh decides, after the SARIF upload and the comment.
# Inputs come from the environment (SAGE_*), never spliced into this script.
set -u
out="${RUNNER_TEMP:-$PWD}/git-sage"
mkdir -p "$out"
summary="${GITHUB_STEP_SUMMARY:-/dev/stderr}"

base="${SAGE_BASE:-}"
if [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
  base="origin/$GITHUB_BASE_REF"
fi
args=(blame-origin HEAD --all --judge "${SAGE_JUDGE:-offline}" --lang "${SAGE_LANG:-en}"
  --out "$out/sage.sarif" --out "$out/origin.md")
[ -n "$base" ] && args+=(--base "$base")
[ -n "${SAGE_SARIF:-}" ] && args+=(--finding "$SAGE_SARIF")
case "${SAGE_FAIL_ON:-none}" in
  none | "") ;;
  *) args+=(--fail-on "$SAGE_FAIL_ON") ;;
esac

git sage "${args[@]}" 2>"$out/stderr.txt"
code=$?
cat "$out/stderr.txt" >&2
line=$(grep 'git-sage: error:' "$out/stderr.txt" | tail -n 1)
if [ "$code" -eq 2 ] && printf '%s' "$line" | grep -q 'holds no results'; then
  # The scanner found nothing: nothing to explain, and nothing to fail on.
  printf '### git sage\n\nThe scanner reported no results: nothing to explain.\n' >>"$summary"
  code=0
elif [ "$code" -ge 2 ]; then
  printf '### git sage could not explain the findings\n\n%s\n' "$line" >>"$summary"
  level=warning
  case "${SAGE_FAIL_ON:-none}" in none | "") ;; *) level=error ;; esac
  echo "::$level title=git-sage::${line#git-sage: error: }"
fi
{
  echo "exit-code=$code"
  [ -s "$out/sage.sarif" ] && echo "sarif=$out/sage.sarif"
  [ -s "$out/origin.md" ] && echo "report=$out/origin.md"
} >>"${GITHUB_OUTPUT:-/dev/stdout}"
exit 0

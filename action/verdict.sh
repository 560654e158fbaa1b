#!/usr/bin/env bash
# git-sage action, last step: the job's result from blame-origin's exit code (SAGE_EXIT) and
# the `fail-on` input. 1 fails the job (what fail-on asked for was found); 2 or 3 (bad input,
# a judge that could not score) fail it only when fail-on asked for a gate — a gate must not
# pass on a question nobody answered — and are otherwise a warning already in the summary.
set -u
code="${SAGE_EXIT:-3}"
case "$code" in
  0) exit 0 ;;
  1)
    echo "::error title=git-sage::fail-on ${SAGE_FAIL_ON:-}: the agent's repair went wrong where the report says"
    exit 1
    ;;
  *)
    case "${SAGE_FAIL_ON:-none}" in
      none | "") exit 0 ;;
      *) exit "$code" ;;
    esac
    ;;
esac

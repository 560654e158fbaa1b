#!/usr/bin/env bash
# git-sage action, first step: the release to install — the `version` input, else the
# version of this action's own Cargo.toml (the action and the binary are released together).
set -eu
v="${SAGE_VERSION:-}"
if [ -z "$v" ]; then
  v=$(sed -n 's/^version = "\(.*\)"$/\1/p' "${GITHUB_ACTION_PATH:-.}/Cargo.toml" | head -n 1)
fi
v="${v#v}"
case "$v" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *)
    echo "::error title=git-sage::version '$v': expected a release such as 0.1.0"
    exit 2
    ;;
esac
echo "version=$v" >>"${GITHUB_OUTPUT:-/dev/stdout}"

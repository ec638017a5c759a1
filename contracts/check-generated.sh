#!/bin/sh
# Fails when the committed contract artifacts and Go bindings under chain/ are
# not what `go generate ./chain/...` produces from the current sources.
# Needs node/npm and the Go module proxy (abigen is run with `go run`).
set -eu
cd "$(dirname "$0")/.."
go generate ./chain/...
if ! git diff --exit-code -- chain contracts; then
	echo "contracts/check-generated.sh: generated chain artifacts are stale; run go generate ./chain/... and commit" >&2
	exit 1
fi
untracked=$(git status --porcelain --untracked-files=all -- chain contracts | grep '^??' | grep -v node_modules || true)
if [ -n "$untracked" ]; then
	echo "contracts/check-generated.sh: untracked generated files:" >&2
	echo "$untracked" >&2
	exit 1
fi

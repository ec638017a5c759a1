#!/bin/sh
# Compiles the contracts with the pinned solc-js; called by `go generate ./chain/...`.
set -eu
cd "$(dirname "$0")"
if [ ! -d node_modules/solc ]; then
	npm ci --no-audit --no-fund --silent
fi
node compile.js

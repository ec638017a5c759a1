#!/bin/sh
# Compiles PharmacyOracle.sol with the pinned solc-js; called by
# `go generate ./pharmacy/...`.
set -eu
cd "$(dirname "$0")"
if [ ! -d node_modules/solc ]; then
	npm ci --no-audit --no-fund --silent
fi
node compile-pharmacy.js

# Sourced by .ci/run: installs the docs/verify.md script's two npm packages
# (ethers, @iden3/js-crypto, pinned by package-lock.json) so TestVerifyJS checks
# a real decision without Go. Without node or npm the test skips.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  (cd examples/verify-js && npm ci --no-audit --no-fund --silent) && export HEALTHAGENTS_TEST_VERIFYJS=1
else
  echo "node/npm not found: TestVerifyJS will skip"
fi

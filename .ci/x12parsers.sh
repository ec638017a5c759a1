# Sourced by .ci/run: installs two npm X12 parsers we did not write,
# node-x12 and x12-parser (pinned by testdata/x12-parsers/package-lock.json),
# so the X12 tests read the service's 271, 999 and TA1 answers with them
# (x12/x12test). Without node or npm they skip.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  (cd testdata/x12-parsers && npm ci --no-audit --no-fund --silent) &&
    export HEALTHAGENTS_TEST_X12_PARSERS="$PWD/testdata/x12-parsers"
else
  echo "node/npm not found: the X12 parser tests will skip"
fi

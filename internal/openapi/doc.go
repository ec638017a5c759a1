// Package openapi generates the service's OpenAPI 3.1 document from the Go
// types its handlers encode and decode, and serves the pages that render it.
//
// A [Document] collects operations ([Document.Add]) and webhooks
// ([Document.AddWebhook]); each names its request and response bodies by a
// zero value of their Go type. [SchemaOf] turns a type into a JSON Schema by
// reflection, following encoding/json (json tags, omitempty, embedding) plus
// a few optional tags (doc, enum, example, format, pattern, minimum,
// maximum, minLength, maxLength, minItems, maxItems, default, required,
// nullable). Named struct types become components/schemas entries and are
// referred to by $ref, so the document and the handlers cannot drift apart.
// [Document.JSON] is deterministic (fixed field order, sorted map keys), so
// the document can be kept as a golden file.
//
// [SwaggerUI] and [Redoc] serve the two documentation pages with every
// asset embedded in the binary: they render with no internet access.
// [SpecHandler] serves the document itself.
//
// The package has no global state; nothing in it is specific to one
// service except the defaults of [ErrorBody] and the error descriptions,
// which follow the service specification.
package openapi

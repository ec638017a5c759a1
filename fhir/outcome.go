package fhir

import (
	"net/http"

	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// OperationOutcome is the FHIR R4 form of an error answer
// (http://hl7.org/fhir/R4/operationoutcome.html): one issue of severity
// error whose code follows the HTTP status (FHIR's RESTful API table,
// http://hl7.org/fhir/R4/http.html#Status-Codes) and whose diagnostics is
// the service's detail text, unchanged. detail is the JSON error body's
// detail: it holds no medical data, so neither does the outcome. When the
// detail names an element of a FHIR Bundle the service could not read
// (DetailPrefix), the issue's expression is that element's FHIRPath, so a
// FHIR client finds the entry — its index and resourceType — without
// parsing the text.
func OperationOutcome(status int, detail string) r4.OperationOutcome {
	issue := r4.OperationOutcomeIssue{Severity: r4.IssueSeverityError, Code: issueType(status)}
	if detail != "" {
		issue.Diagnostics = &detail
	}
	if expr, ok := Expression(detail); ok {
		issue.Expression = []string{expr}
	}
	return r4.OperationOutcome{Issue: []r4.OperationOutcomeIssue{issue}}
}

// issueType maps an HTTP error status to the issue-type code FHIR servers
// use for it.
func issueType(status int) r4.IssueType {
	switch status {
	case http.StatusBadRequest:
		return r4.IssueTypeInvalid
	case http.StatusUnauthorized:
		return r4.IssueTypeLogin
	case http.StatusForbidden:
		return r4.IssueTypeForbidden
	case http.StatusNotFound:
		return r4.IssueTypeNotFound
	case http.StatusMethodNotAllowed:
		return r4.IssueTypeNotSupported
	case http.StatusConflict:
		return r4.IssueTypeConflict
	case http.StatusRequestEntityTooLarge:
		return r4.IssueTypeTooCostly
	case http.StatusUnprocessableEntity:
		return r4.IssueTypeProcessing
	case http.StatusTooManyRequests:
		return r4.IssueTypeThrottled
	case http.StatusServiceUnavailable:
		return r4.IssueTypeTransient
	case http.StatusGatewayTimeout:
		return r4.IssueTypeTimeout
	}
	return r4.IssueTypeException
}

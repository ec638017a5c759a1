package fhir

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrInvalid is wrapped by every error this package returns for a Bundle
// that cannot be mapped.
var ErrInvalid = errors.New("invalid FHIR R4 Bundle")

// Error reports an element of a Bundle that is missing or cannot be mapped.
// Path names the resource and element in FHIR's own terms, e.g.
// "Bundle.entry[2].resource(Coverage).period.start"; Reason never holds a
// value taken from the Bundle.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return e.Path + ": " + e.Reason }

// Unwrap makes every *Error match ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

func errAt(path, format string, args ...any) error {
	return &Error{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// DetailPrefix introduces a Bundle's *Error in the service's error
// detail: "...: Invalid patient record: FHIR R4 Bundle: <Path>: <Reason>".
// [Expression] reads the path back for an OperationOutcome.
const DetailPrefix = "FHIR R4 Bundle: "

// Expression returns the FHIRPath of the element a detail written with
// DetailPrefix names ("Bundle.entry[2].resource.ofType(Coverage).period"),
// and whether the detail names one.
func Expression(detail string) (string, bool) {
	_, rest, ok := strings.Cut(detail, DetailPrefix)
	if !ok {
		return "", false
	}
	path, _, ok := strings.Cut(rest, ": ")
	if !ok || !strings.HasPrefix(path, "Bundle") || strings.ContainsAny(path, " \"'") {
		return "", false
	}
	// Our "resource(Coverage)" is FHIRPath's "resource.ofType(Coverage)".
	return typeFilter.ReplaceAllString(path, "$1.ofType($2)"), true
}

var typeFilter = regexp.MustCompile(`([A-Za-z]+)\(([A-Za-z?]+)\)`)

// entryPath is the path of entry i's resource of type typ.
func entryPath(i int, typ string) string {
	return fmt.Sprintf("Bundle.entry[%d].resource(%s)", i, typ)
}

package fhir

import (
	"errors"
	"fmt"
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

// entryPath is the path of entry i's resource of type typ.
func entryPath(i int, typ string) string {
	return fmt.Sprintf("Bundle.entry[%d].resource(%s)", i, typ)
}

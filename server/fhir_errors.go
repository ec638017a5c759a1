package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/healthagents/healthagents/fhir"
)

// fhirErrors answers errors as a FHIR R4 OperationOutcome to a request
// whose Accept names application/fhir+json: a FHIR client (HAPI, Firely,
// SMART apps) reads an OperationOutcome on failure, not our {"detail"}
// body. The status, the headers (Retry-After, WWW-Authenticate, Allow)
// and the detail text are kept; the detail becomes the issue's
// diagnostics (docs/decisions/fhir.md, "Errors"). Every error path of the
// server writes a JSON {"detail"} body, so one wrapper here covers the
// handlers, the guards (401, 403, 429), the body limits (413) and the
// router's 404/405 alike. Successful answers pass through unbuffered.
func (s *srv) fhirErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !wantsFHIR(r) {
			next.ServeHTTP(w, r)
			return
		}
		fw := &fhirErrorWriter{ResponseWriter: w}
		defer fw.finish()
		next.ServeHTTP(fw, r)
	})
}

// fhirErrorWriter holds back a JSON error body to rewrite it.
type fhirErrorWriter struct {
	http.ResponseWriter
	status  int
	held    *bytes.Buffer // non-nil while an error body is held back
	started bool
}

func (f *fhirErrorWriter) WriteHeader(status int) {
	if f.started || f.held != nil {
		return
	}
	ct := f.Header().Get("Content-Type")
	if status >= 400 && (ct == "" || strings.HasPrefix(ct, "application/json")) {
		f.status, f.held = status, new(bytes.Buffer)
		return
	}
	f.started = true
	f.ResponseWriter.WriteHeader(status)
}

func (f *fhirErrorWriter) Write(b []byte) (int, error) {
	if !f.started && f.held == nil {
		f.WriteHeader(http.StatusOK)
	}
	if f.held != nil {
		if f.held.Len()+len(b) > 1<<20 { // an error body is a line; never hold more
			return 0, http.ErrContentLength
		}
		return f.held.Write(b)
	}
	return f.ResponseWriter.Write(b)
}

// Flush passes through for a streamed success; a held error is written by
// finish.
func (f *fhirErrorWriter) Flush() {
	if f.held != nil {
		return
	}
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (f *fhirErrorWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// finish writes the held error as an OperationOutcome. A body that is not
// our {"detail"} JSON goes out as it came.
func (f *fhirErrorWriter) finish() {
	if f.held == nil {
		return
	}
	var body ErrorBody
	h := f.Header()
	if err := json.Unmarshal(f.held.Bytes(), &body); err != nil {
		h.Set("Content-Length", strconv.Itoa(f.held.Len()))
		f.ResponseWriter.WriteHeader(f.status)
		_, _ = f.ResponseWriter.Write(f.held.Bytes())
		return
	}
	writeFHIR(f.ResponseWriter, f.status, fhir.OperationOutcome(f.status, body.Detail))
}

package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
)

// writeJSON encodes v with status. Encoding errors of our own types cannot
// happen; if one does, the client gets a truncated body and we log nothing
// that could hold data.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		buf = []byte(`{"detail":"Internal server error"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(len(buf)+1))
	w.WriteHeader(status)
	buf = append(buf, '\n')
	_, _ = w.Write(buf)
}

// read decodes the JSON request body into v under a size limit: the
// smaller of limit and the route's own (limits.go). required lists the
// top-level fields that must be present and not null; a missing one gives
// `Invalid request format: missing field 'x'`. Unknown fields are ignored,
// as the spec's reference implementation does.
func read(w http.ResponseWriter, r *http.Request, limit int64, v any, required ...string) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: Content-Type must be application/json")
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	return decode(body, v, required...)
}

// readBody reads the whole body under the smaller of limit and the route's
// limit: 413 beyond it, 400 if the body cannot be read.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if rl := routeBodyLimit(r); rl > 0 && rl < limit {
		limit = rl
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, bodyReadError(err)
	}
	return body, nil
}

// bodyReadError is the answer to a request body that could not be read:
// 413 naming the limit a MaxBytesReader met (the route's, or a smaller one
// the handler asked for), else 400.
func bodyReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return healthagents.Errorf(healthagents.CodeTooLarge, "Request body too large: the limit is %d bytes", mbe.Limit)
	}
	return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: could not read body")
}

// decode is read without the transport (FuzzDecode drives it).
func decode(body []byte, v any, required ...string) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		if len(required) > 0 {
			return missing(required[0])
		}
		return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: empty body")
	}
	if err := checkDepth(body, maxJSONDepth); err != nil {
		return err
	}
	if body[0] != '{' {
		return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: body must be a JSON object")
	}
	if len(required) > 0 {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			return syntaxError(err)
		}
		for _, f := range required {
			raw, ok := top[f]
			if !ok || bytes.Equal(raw, []byte("null")) {
				return missing(f)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return syntaxError(err)
	}
	if dec.More() {
		return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: trailing data after the JSON object")
	}
	return nil
}

func missing(field string) error {
	return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: missing field '%s'", field)
}

func syntaxError(err error) error {
	var ve *api.ValidationError
	if errors.As(err, &ve) {
		// A field type's own reader refused the value (api.Nonce).
		return healthagents.Errorf(healthagents.CodeInvalid, "%s", ve.Detail)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(body)"
		}
		return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: field '%s' must be %s", field, jsonType(te.Type.String()))
	}
	return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: malformed JSON")
}

func jsonType(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	default:
		return "an object"
	}
}

// maxJSONDepth bounds nesting so a hostile body cannot exhaust the stack or
// CPU of the decoder.
const maxJSONDepth = 32

// checkDepth scans body for nesting deeper than max, outside strings.
func checkDepth(body []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, c := range body {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return healthagents.Errorf(healthagents.CodeInvalid, "Invalid request format: JSON nested deeper than %d levels", max)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

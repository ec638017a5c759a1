package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/healthagents/healthagents/credential"
)

// Schema is the value of the "schema" field this package writes and accepts.
const Schema = "healthagents/record/v1"

// DateLayout is the layout of every calendar date in a record (ISO 8601, no time).
const DateLayout = "2006-01-02"

// MaxSize is the largest plaintext record Parse accepts, in bytes.
const MaxSize = 64 << 10

// Record is the plaintext patient record.
type Record struct {
	Schema    string `json:"schema"`
	PatientID string `json:"patient_id"`
	BirthDate string `json:"birth_date,omitempty"`
	// Name is the patient's name as the payer knows it, optional: an X12
	// 270 finds its member by member id and name or birth date. It stays
	// inside the envelope; the service keeps only keyed hashes of it
	// (docs/x12.md, "Who is the subscriber").
	Name         *Name              `json:"name,omitempty"`
	Sex          string             `json:"sex,omitempty"`
	Coverage     *Coverage          `json:"coverage,omitempty"`
	Conditions   []string           `json:"conditions,omitempty"`
	Allergies    []string           `json:"allergies,omitempty"`
	Medications  []string           `json:"medications,omitempty"`
	Observations map[string]float64 `json:"observations,omitempty"`
	Diagnosis    string             `json:"diagnosis,omitempty"`
}

// Name is a patient's family and given (first) name.
type Name struct {
	Family string `json:"family"`
	Given  string `json:"given"`
}

// MaxNameLength bounds each part of a Name, in characters.
const MaxNameLength = 100

// Coverage is the insurance part of a record.
type Coverage struct {
	PayerID            string         `json:"payer_id"`
	PlanID             string         `json:"plan_id"`
	MemberID           string         `json:"member_id"`
	Status             string         `json:"status"`
	Start              string         `json:"start"`
	End                string         `json:"end"`
	Deductible         float64        `json:"deductible"`
	DeductibleMet      float64        `json:"deductible_met"`
	Copay              float64        `json:"copay"`
	ExcludedProcedures []string       `json:"excluded_procedures,omitempty"`
	CoverageOverrides  map[string]int `json:"coverage_overrides,omitempty"`
	// Credential, when present, is the payer's signature over these terms
	// (docs/credentials.md). Parse checks it and that every term above
	// equals the signed one; the caller checks its expiry on the service
	// date (CredentialExpired).
	Credential *credential.Credential `json:"credential,omitempty"`
}

// Coverage status values.
const (
	StatusActive    = "active"
	StatusInactive  = "inactive"
	StatusCancelled = "cancelled"
)

// FieldError reports a record field that is missing or malformed. Its message
// names the field by its JSON path and never repeats the field's value.
type FieldError struct {
	Field  string // JSON path, e.g. "coverage.start"
	Reason string // e.g. "is required", "must be a date YYYY-MM-DD"
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("record field '%s' %s", e.Field, e.Reason)
}

// ErrMalformed is wrapped by every error Parse returns.
var ErrMalformed = errors.New("malformed patient record")

func malformed(field, reason string) error {
	return fmt.Errorf("%w: %w", ErrMalformed, &FieldError{Field: field, Reason: reason})
}

// Parse decodes and validates a plaintext record. Errors wrap ErrMalformed
// and a *FieldError naming the offending field; they never contain the value.
func Parse(plaintext []byte) (*Record, error) {
	if len(plaintext) > MaxSize {
		return nil, malformed("", fmt.Sprintf("record is larger than %d bytes", MaxSize))
	}
	dec := json.NewDecoder(bytes.NewReader(plaintext))
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, malformed("", "must be a single JSON object")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(root)"
		}
		return malformed(field, "must be "+jsonKind(te.Type.Kind().String()))
	}
	return malformed("", "is not valid JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "float64", "int", "int64":
		return "a number"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	default:
		return "of another type"
	}
}

// Validate checks the fields every operation relies on: schema, patient_id,
// and, when present, the shape of dates and of the coverage block.
func (r *Record) Validate() error {
	if r.Schema != "" && r.Schema != Schema {
		return malformed("schema", fmt.Sprintf("must be %q", Schema))
	}
	if strings.TrimSpace(r.PatientID) == "" {
		return malformed("patient_id", "is required")
	}
	if r.BirthDate != "" {
		if _, err := time.Parse(DateLayout, r.BirthDate); err != nil {
			return malformed("birth_date", "must be a date YYYY-MM-DD")
		}
	}
	if r.Name != nil {
		for field, v := range map[string]string{"name.family": r.Name.Family, "name.given": r.Name.Given} {
			if strings.TrimSpace(v) == "" {
				return malformed(field, "is required when name is given")
			}
			if utf8.RuneCountInString(v) > MaxNameLength {
				return malformed(field, fmt.Sprintf("must be at most %d characters", MaxNameLength))
			}
		}
	}
	if r.Coverage != nil {
		if err := r.Coverage.validate(); err != nil {
			return err
		}
	}
	for k, v := range r.Observations {
		if v != v || v > 1e300 || v < -1e300 {
			return malformed("observations."+k, "must be a finite number")
		}
	}
	return nil
}

func (c *Coverage) validate() error {
	switch {
	case c.MemberID == "":
		return malformed("coverage.member_id", "is required")
	case c.Status == "":
		return malformed("coverage.status", "is required")
	case c.Start == "":
		return malformed("coverage.start", "is required")
	case c.End == "":
		return malformed("coverage.end", "is required")
	}
	switch c.Status {
	case StatusActive, StatusInactive, StatusCancelled:
	default:
		return malformed("coverage.status", "must be one of active, inactive, cancelled")
	}
	start, err := time.Parse(DateLayout, c.Start)
	if err != nil {
		return malformed("coverage.start", "must be a date YYYY-MM-DD")
	}
	end, err := time.Parse(DateLayout, c.End)
	if err != nil {
		return malformed("coverage.end", "must be a date YYYY-MM-DD")
	}
	if end.Before(start) {
		return malformed("coverage.end", "must not be before coverage.start")
	}
	for name, v := range map[string]float64{"deductible": c.Deductible, "deductible_met": c.DeductibleMet, "copay": c.Copay} {
		if v < 0 || v != v || v > 1e9 {
			return malformed("coverage."+name, "must be a non-negative amount")
		}
	}
	for code, pct := range c.CoverageOverrides {
		if pct < 0 || pct > 100 {
			return malformed("coverage.coverage_overrides."+code, "must be a percentage 0-100")
		}
	}
	if c.Credential != nil {
		return c.checkCredential()
	}
	return nil
}

// Window returns the coverage start and end dates (inclusive).
// It assumes Validate has succeeded.
func (c *Coverage) Window() (start, end time.Time) {
	start, _ = time.Parse(DateLayout, c.Start)
	end, _ = time.Parse(DateLayout, c.End)
	return start, end
}

// Excludes reports whether code is listed in excluded_procedures.
func (c *Coverage) Excludes(code string) bool {
	for _, x := range c.ExcludedProcedures {
		if strings.EqualFold(x, code) {
			return true
		}
	}
	return false
}

// Marshal encodes r as JSON with the schema field set.
func (r *Record) Marshal() ([]byte, error) {
	c := *r
	if c.Schema == "" {
		c.Schema = Schema
	}
	return json.Marshal(&c)
}

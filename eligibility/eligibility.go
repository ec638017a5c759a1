package eligibility

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/healthagents/healthagents/record"
)

// Class is one procedure class of the specification's catalogue. Its Index
// (1 for PROC001 … 5 for PROC005) is stable forever: the zero-knowledge
// circuit identifies a class by it.
type Class struct {
	Code         string `json:"code"`
	Name         string `json:"name"`
	BaseCoverage int    `json:"base_coverage"`
	PreAuth      bool   `json:"pre_auth"`
	Index        int    `json:"index"`
}

// Procedure is a code a caller may ask about: a class code itself
// (System "healthagents") or a CPT / HCPCS code mapped onto a class.
type Procedure struct {
	Code   string `json:"code"`
	Name   string `json:"name"`
	System string `json:"system"` // SystemHealthagents, SystemCPT or SystemHCPCS
	Class  Class  `json:"class"`
}

// Decision is the outcome of [Agent.Check].
type Decision struct {
	ProcedureCode string    `json:"procedure_code"` // the requested code in canonical form
	Procedure     Procedure `json:"procedure"`
	ServiceDate   time.Time `json:"service_date"` // the calendar date checked, at 00:00 UTC

	Eligible              bool `json:"eligible"`
	CoveragePct           int  `json:"coverage_pct"` // 0 whenever Eligible is false
	RequiresAuthorization bool `json:"requires_authorization"`

	// Reason is "" when eligible, otherwise a short human sentence. It names
	// at most the procedure code and the service date, never other record data.
	Reason string `json:"reason,omitempty"`
	// NoCoverage is true when the record has no coverage in effect on the
	// service date: no coverage block, a status other than active, or a date
	// outside the coverage window (the v1 API reports it as NO_INSURANCE).
	NoCoverage bool `json:"no_coverage"`
}

var (
	// ErrUnknownProcedure is wrapped, with the code, by Lookup and Check for a
	// code that is not in the catalogue.
	ErrUnknownProcedure = errors.New("unknown procedure code")
	// ErrNoRecord is returned by Check when it is given a nil record.
	ErrNoRecord = errors.New("eligibility: no patient record")
)

// maxCodeInError bounds how much of a caller's code an error repeats.
const maxCodeInError = 64

// Option configures an [Agent].
type Option func(*options) error

type options struct {
	catalogue []byte
}

// WithCatalogue replaces the embedded catalogue with the given JSON document,
// in the shape of data/catalogue.json. It is validated exactly like the
// embedded one; New fails with an error wrapping [ErrCatalogue] if it is bad.
func WithCatalogue(jsonDoc []byte) Option {
	return func(o *options) error {
		if len(jsonDoc) == 0 {
			return fmt.Errorf("%w: empty document", ErrCatalogue)
		}
		o.catalogue = jsonDoc
		return nil
	}
}

// Agent answers eligibility questions against a procedure catalogue. It is
// immutable after New and safe for concurrent use.
type Agent struct {
	cat *catalogue
}

// New loads and validates the catalogue (the embedded one unless
// [WithCatalogue] is given) and returns a ready agent.
func New(opts ...Option) (*Agent, error) {
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	raw := o.catalogue
	if raw == nil {
		var err error
		if raw, err = dataFS.ReadFile(defaultCatalogue); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCatalogue, err)
		}
	}
	cat, err := parseCatalogue(raw)
	if err != nil {
		return nil, err
	}
	return &Agent{cat: cat}, nil
}

// Lookup returns the catalogued procedure for code. The code is trimmed and
// compared case-insensitively. An unknown code gives an error wrapping
// [ErrUnknownProcedure].
func (a *Agent) Lookup(code string) (Procedure, error) {
	p, ok := a.cat.byCode[canonical(code)]
	if !ok {
		return Procedure{}, unknown(code)
	}
	return p, nil
}

func unknown(code string) error {
	code = strings.TrimSpace(code)
	if len(code) > maxCodeInError {
		code = code[:maxCodeInError] + "…"
	}
	return fmt.Errorf("%w: %q", ErrUnknownProcedure, code)
}

// Classes returns the procedure classes ordered by Index. The slice is a copy.
func (a *Agent) Classes() []Class {
	return append([]Class(nil), a.cat.classes...)
}

// Procedures returns every catalogued procedure (class codes included),
// ordered by class index and then by code. The slice is a copy.
func (a *Agent) Procedures() []Procedure {
	out := make([]Procedure, 0, len(a.cat.byCode))
	for _, p := range a.cat.byCode {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Class.Index != out[j].Class.Index {
			return out[i].Class.Index < out[j].Class.Index
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// Version is the version string of the loaded catalogue.
func (a *Agent) Version() string { return a.cat.version }

// Check decides whether rec's coverage pays for procedureCode on date, by the
// rules in the package documentation. Only the calendar date of date in UTC
// matters. Errors: ctx's error, [ErrNoRecord], an error wrapping
// [ErrUnknownProcedure], or an error wrapping [record.ErrMalformed] if the
// coverage dates do not parse or the applicable override is outside 0-100 (a
// record that passed [record.Parse] never has either).
func (a *Agent) Check(ctx context.Context, rec *record.Record, procedureCode string, date time.Time) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	if rec == nil {
		return Decision{}, ErrNoRecord
	}
	proc, err := a.Lookup(procedureCode)
	if err != nil {
		return Decision{}, err
	}
	day := calendarDay(date)
	d := Decision{
		ProcedureCode:         proc.Code,
		Procedure:             proc,
		ServiceDate:           day,
		RequiresAuthorization: proc.Class.PreAuth,
	}
	cov := rec.Coverage
	if cov == nil {
		return d.deny("no insurance coverage on record", true), nil
	}
	if cov.Status != record.StatusActive {
		return d.deny("coverage is "+cov.Status, true), nil
	}
	start, err := parseDate("coverage.start", cov.Start)
	if err != nil {
		return Decision{}, err
	}
	end, err := parseDate("coverage.end", cov.End)
	if err != nil {
		return Decision{}, err
	}
	if day.Before(start) || day.After(end) {
		return d.deny("coverage not in effect on "+day.Format(record.DateLayout), true), nil
	}
	if cov.Excludes(proc.Code) || cov.Excludes(proc.Class.Code) {
		return d.deny("procedure "+proc.Code+" is excluded by the plan", false), nil
	}
	d.Eligible = true
	d.CoveragePct = proc.Class.BaseCoverage
	key, ok := override(cov.CoverageOverrides, proc.Code)
	if !ok {
		key, ok = override(cov.CoverageOverrides, proc.Class.Code)
	}
	if ok {
		pct := cov.CoverageOverrides[key]
		if pct < 0 || pct > 100 {
			return Decision{}, fmt.Errorf("%w: %w", record.ErrMalformed,
				&record.FieldError{Field: "coverage.coverage_overrides." + key, Reason: "must be a percentage 0-100"})
		}
		d.CoveragePct = pct
	}
	return d, nil
}

func (d Decision) deny(reason string, noCoverage bool) Decision {
	d.Eligible = false
	d.CoveragePct = 0
	d.Reason = reason
	d.NoCoverage = noCoverage
	return d
}

// calendarDay is t's calendar date in UTC, at midnight UTC.
func calendarDay(t time.Time) time.Time {
	y, m, dd := t.UTC().Date()
	return time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
}

func parseDate(field, s string) (time.Time, error) {
	t, err := time.Parse(record.DateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %w", record.ErrMalformed,
			&record.FieldError{Field: field, Reason: "must be a date YYYY-MM-DD"})
	}
	return t, nil
}

// override finds the key of the plan's coverage override for code
// (canonical form). Keys match after trimming and upper-casing; if several
// keys match, an exact match wins, then the lexically smallest key, so the
// result never depends on map order.
func override(overrides map[string]int, code string) (string, bool) {
	if _, ok := overrides[code]; ok {
		return code, true
	}
	best, found := "", false
	for k := range overrides {
		if canonical(k) == code && (!found || k < best) {
			best, found = k, true
		}
	}
	return best, found
}

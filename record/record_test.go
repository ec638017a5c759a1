package record_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/record"
)

func TestParse(t *testing.T) {
	t.Parallel()
	valid, err := os.ReadFile("../testdata/record.json")
	require.NoError(t, err)

	tests := []struct {
		name  string
		in    string
		field string // "" = ok
	}{
		{"ok/full", string(valid), ""},
		{"ok/minimal", `{"patient_id":"P1"}`, ""},
		{"ok/unknown fields ignored", `{"patient_id":"P1","future":{"x":1}}`, ""},
		{"fail/missing patient_id", `{"schema":"healthagents/record/v1"}`, "patient_id"},
		{"fail/blank patient_id", `{"patient_id":"  "}`, "patient_id"},
		{"fail/wrong schema", `{"schema":"other","patient_id":"P1"}`, "schema"},
		{"fail/patient_id type", `{"patient_id":123}`, "patient_id"},
		{"fail/birth_date", `{"patient_id":"P1","birth_date":"02/04/1968"}`, "birth_date"},
		{"fail/coverage member", `{"patient_id":"P1","coverage":{"status":"active","start":"2026-01-01","end":"2026-12-31"}}`, "coverage.member_id"},
		{"fail/coverage status", `{"patient_id":"P1","coverage":{"member_id":"M","status":"maybe","start":"2026-01-01","end":"2026-12-31"}}`, "coverage.status"},
		{"fail/coverage start", `{"patient_id":"P1","coverage":{"member_id":"M","status":"active","start":"2026-13-01","end":"2026-12-31"}}`, "coverage.start"},
		{"fail/coverage window", `{"patient_id":"P1","coverage":{"member_id":"M","status":"active","start":"2026-02-01","end":"2026-01-31"}}`, "coverage.end"},
		{"fail/negative copay", `{"patient_id":"P1","coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31","copay":-1}}`, "coverage.copay"},
		{"fail/override range", `{"patient_id":"P1","coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31","coverage_overrides":{"PROC001":101}}}`, "coverage.coverage_overrides.PROC001"},
		{"fail/observation type", `{"patient_id":"P1","observations":{"bmi":"high"}}`, "observations"},
		{"fail/not json", `patient`, ""},
		{"fail/two objects", `{"patient_id":"P1"}{"patient_id":"P2"}`, ""},
		{"fail/array", `[]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := record.Parse([]byte(tc.in))
			if strings.HasPrefix(tc.name, "ok/") {
				require.NoError(t, err)
				assert.NotEmpty(t, r.PatientID)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, record.ErrMalformed)
			var fe *record.FieldError
			require.True(t, errors.As(err, &fe))
			if tc.field != "" {
				assert.Equal(t, tc.field, fe.Field)
			}
		})
	}
}

func TestParseErrorsNeverEchoValues(t *testing.T) {
	t.Parallel()
	secret := "SECRET-DIAGNOSIS-VALUE"
	for _, in := range []string{
		`{"patient_id":"P1","birth_date":"` + secret + `"}`,
		`{"patient_id":"P1","coverage":{"member_id":"M","status":"` + secret + `","start":"2026-01-01","end":"2026-12-31"}}`,
		`{"patient_id":"P1","observations":{"x":"` + secret + `"}}`,
		`{"patient_id":"` + secret,
	} {
		_, err := record.Parse([]byte(in))
		require.Error(t, err)
		assert.NotContains(t, err.Error(), secret)
	}
}

func TestParseSizeLimit(t *testing.T) {
	t.Parallel()
	big := `{"patient_id":"P1","sex":"` + strings.Repeat("x", record.MaxSize) + `"}`
	_, err := record.Parse([]byte(big))
	assert.ErrorIs(t, err, record.ErrMalformed)
}

func TestCoverageHelpers(t *testing.T) {
	t.Parallel()
	valid, err := os.ReadFile("../testdata/record.json")
	require.NoError(t, err)
	r, err := record.Parse(valid)
	require.NoError(t, err)
	start, end := r.Coverage.Window()
	assert.Equal(t, "2026-01-01", start.Format(record.DateLayout))
	assert.Equal(t, "2027-12-31", end.Format(record.DateLayout))
	assert.True(t, r.Coverage.Excludes("proc005"))
	assert.False(t, r.Coverage.Excludes("PROC001"))

	b, err := r.Marshal()
	require.NoError(t, err)
	again, err := record.Parse(b)
	require.NoError(t, err)
	assert.Equal(t, r, again)
}

func FuzzParse(f *testing.F) {
	valid, _ := os.ReadFile("../testdata/record.json")
	f.Add(valid)
	f.Add([]byte(`{"patient_id":"P1"}`))
	f.Add([]byte(`{"patient_id":"P1","coverage":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := record.Parse(b)
		if err != nil {
			if !errors.Is(err, record.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			return
		}
		if r.PatientID == "" {
			t.Fatal("accepted a record without patient_id")
		}
	})
}

package eligibility_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/record"
)

var serviceDay = time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC)

func newAgent(t testing.TB) *eligibility.Agent {
	t.Helper()
	a, err := eligibility.New()
	require.NoError(t, err)
	return a
}

// rec returns a record with active 2026 coverage, changed by mods.
func rec(mods ...func(*record.Coverage)) *record.Record {
	c := &record.Coverage{
		PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789",
		Status: record.StatusActive, Start: "2026-01-01", End: "2026-12-31",
	}
	for _, m := range mods {
		m(c)
	}
	return &record.Record{Schema: record.Schema, PatientID: "PT-1", Coverage: c}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	a := newAgent(t)

	type want struct {
		eligible   bool
		pct        int
		preAuth    bool
		noCoverage bool
		reason     string
		class      string
	}
	tests := []struct {
		name string
		rec  *record.Record
		code string
		date time.Time
		want want
	}{
		// The five catalogue rows of the specification.
		{"ok/PROC001 MRI", rec(), "PROC001", serviceDay, want{true, 80, true, false, "", "PROC001"}},
		{"ok/PROC002 X-ray", rec(), "PROC002", serviceDay, want{true, 60, false, false, "", "PROC002"}},
		{"ok/PROC003 CT", rec(), "PROC003", serviceDay, want{true, 100, true, false, "", "PROC003"}},
		{"ok/PROC004 blood work", rec(), "PROC004", serviceDay, want{true, 90, false, false, "", "PROC004"}},
		{"ok/PROC005 surgery", rec(), "PROC005", serviceDay, want{true, 85, true, false, "", "PROC005"}},
		// Real codes decide through their class.
		{"ok/CPT 70551 is an MRI", rec(), "70551", serviceDay, want{true, 80, true, false, "", "PROC001"}},
		{"ok/CPT 85025 is blood work", rec(), " 85025 ", serviceDay, want{true, 90, false, false, "", "PROC004"}},
		{"ok/HCPCS lower case", rec(), "g0103", serviceDay, want{true, 90, false, false, "", "PROC004"}},
		{"ok/class code lower case", rec(), "proc003", serviceDay, want{true, 100, true, false, "", "PROC003"}},
		// Window edges are inclusive, compared as UTC calendar dates.
		{"ok/first day", rec(), "PROC002", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), want{true, 60, false, false, "", "PROC002"}},
		{"ok/last day late", rec(), "PROC002", time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), want{true, 60, false, false, "", "PROC002"}},
		{"ok/zone converted to UTC", rec(), "PROC002", time.Date(2027, 1, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)), want{true, 60, false, false, "", "PROC002"}},
		// Rule 2: no coverage block.
		{"fail/no coverage", &record.Record{PatientID: "PT-1"}, "PROC001", serviceDay,
			want{false, 0, true, true, "no insurance coverage on record", "PROC001"}},
		// Rule 3: status.
		{"fail/inactive", rec(func(c *record.Coverage) { c.Status = record.StatusInactive }), "PROC002", serviceDay,
			want{false, 0, false, true, "coverage is inactive", "PROC002"}},
		{"fail/cancelled", rec(func(c *record.Coverage) { c.Status = record.StatusCancelled }), "PROC001", serviceDay,
			want{false, 0, true, true, "coverage is cancelled", "PROC001"}},
		// Rule 4: window.
		{"fail/expired", rec(func(c *record.Coverage) { c.Start, c.End = "2025-01-01", "2025-12-31" }), "PROC003", serviceDay,
			want{false, 0, true, true, "coverage not in effect on 2026-11-21", "PROC003"}},
		{"fail/not started", rec(func(c *record.Coverage) { c.Start = "2026-11-22" }), "PROC004", serviceDay,
			want{false, 0, false, true, "coverage not in effect on 2026-11-21", "PROC004"}},
		{"fail/day after end", rec(), "PROC004", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
			want{false, 0, false, true, "coverage not in effect on 2027-01-01", "PROC004"}},
		// Rule 3 comes before rule 4.
		{"fail/inactive and expired", rec(func(c *record.Coverage) { c.Status, c.End = record.StatusInactive, "2025-12-31" }), "PROC001", serviceDay,
			want{false, 0, true, true, "coverage is inactive", "PROC001"}},
		// Rule 5: exclusions by class code and by CPT code.
		{"fail/excluded by class code", rec(func(c *record.Coverage) { c.ExcludedProcedures = []string{"proc005"} }), "47562", serviceDay,
			want{false, 0, true, false, "procedure 47562 is excluded by the plan", "PROC005"}},
		{"fail/class excluded when asked by class", rec(func(c *record.Coverage) { c.ExcludedProcedures = []string{"PROC005"} }), "PROC005", serviceDay,
			want{false, 0, true, false, "procedure PROC005 is excluded by the plan", "PROC005"}},
		{"fail/excluded by CPT code", rec(func(c *record.Coverage) { c.ExcludedProcedures = []string{"70553"} }), "70553", serviceDay,
			want{false, 0, true, false, "procedure 70553 is excluded by the plan", "PROC001"}},
		{"ok/CPT exclusion leaves siblings", rec(func(c *record.Coverage) { c.ExcludedProcedures = []string{"70553"} }), "70551", serviceDay,
			want{true, 80, true, false, "", "PROC001"}},
		{"fail/expired wins over excluded", rec(func(c *record.Coverage) { c.End, c.ExcludedProcedures = "2026-06-30", []string{"PROC001"} }), "PROC001", serviceDay,
			want{false, 0, true, true, "coverage not in effect on 2026-11-21", "PROC001"}},
		// Rule 6: overrides, code before class before base.
		{"ok/override by class", rec(func(c *record.Coverage) { c.CoverageOverrides = map[string]int{"PROC002": 70} }), "71046", serviceDay,
			want{true, 70, false, false, "", "PROC002"}},
		{"ok/override by code", rec(func(c *record.Coverage) { c.CoverageOverrides = map[string]int{"PROC002": 70, "71046": 95} }), "71046", serviceDay,
			want{true, 95, false, false, "", "PROC002"}},
		{"ok/override of other code ignored", rec(func(c *record.Coverage) { c.CoverageOverrides = map[string]int{"71045": 10} }), "71046", serviceDay,
			want{true, 60, false, false, "", "PROC002"}},
		{"ok/override key case-insensitive", rec(func(c *record.Coverage) { c.CoverageOverrides = map[string]int{"proc001": 50} }), "PROC001", serviceDay,
			want{true, 50, true, false, "", "PROC001"}},
		{"ok/exact key beats folded key", rec(func(c *record.Coverage) { c.CoverageOverrides = map[string]int{"proc001": 50, "PROC001": 40} }), "proc001", serviceDay,
			want{true, 40, true, false, "", "PROC001"}},
		{"ok/override to zero", rec(func(c *record.Coverage) { c.CoverageOverrides = map[string]int{"PROC003": 0} }), "74177", serviceDay,
			want{true, 0, true, false, "", "PROC003"}},
		{"fail/override ignored when ineligible", rec(func(c *record.Coverage) {
			c.Status, c.CoverageOverrides = record.StatusInactive, map[string]int{"PROC003": 50}
		}), "PROC003", serviceDay, want{false, 0, true, true, "coverage is inactive", "PROC003"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := a.Check(t.Context(), tc.rec, tc.code, tc.date)
			require.NoError(t, err)
			got := want{d.Eligible, d.CoveragePct, d.RequiresAuthorization, d.NoCoverage, d.Reason, d.Procedure.Class.Code}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, strings.ToUpper(strings.TrimSpace(tc.code)), d.ProcedureCode)
			assert.Equal(t, d.ProcedureCode, d.Procedure.Code)
			y, m, day := tc.date.UTC().Date()
			assert.Equal(t, time.Date(y, m, day, 0, 0, 0, 0, time.UTC), d.ServiceDate)
		})
	}
}

func TestCheckErrors(t *testing.T) {
	t.Parallel()
	a := newAgent(t)

	t.Run("fail/unknown code", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), rec(), "PROC999", serviceDay)
		require.ErrorIs(t, err, eligibility.ErrUnknownProcedure)
		assert.Contains(t, err.Error(), "PROC999")
	})
	t.Run("fail/unknown long code is truncated", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), rec(), strings.Repeat("9", 10000), serviceDay)
		require.ErrorIs(t, err, eligibility.ErrUnknownProcedure)
		assert.Less(t, len(err.Error()), 200)
	})
	t.Run("fail/empty code", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), rec(), "  ", serviceDay)
		require.ErrorIs(t, err, eligibility.ErrUnknownProcedure)
	})
	t.Run("fail/unknown code before missing coverage", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), &record.Record{PatientID: "PT-1"}, "99999", serviceDay)
		require.ErrorIs(t, err, eligibility.ErrUnknownProcedure)
	})
	t.Run("fail/nil record", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), nil, "PROC001", serviceDay)
		require.ErrorIs(t, err, eligibility.ErrNoRecord)
	})
	t.Run("fail/cancelled context", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := a.Check(ctx, rec(), "PROC001", serviceDay)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("fail/unparsed override out of range", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), rec(func(c *record.Coverage) { c.CoverageOverrides = map[string]int{"proc001": 120} }), "70551", serviceDay)
		require.ErrorIs(t, err, record.ErrMalformed)
		var fe *record.FieldError
		require.True(t, errors.As(err, &fe))
		assert.Equal(t, "coverage.coverage_overrides.proc001", fe.Field)
	})
	t.Run("fail/unparsed bad date", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), rec(func(c *record.Coverage) { c.End = "31/12/2026" }), "PROC001", serviceDay)
		require.ErrorIs(t, err, record.ErrMalformed)
		var fe *record.FieldError
		require.True(t, errors.As(err, &fe))
		assert.Equal(t, "coverage.end", fe.Field)
		assert.NotContains(t, err.Error(), "31/12/2026")
	})
}

func TestLookupAndClasses(t *testing.T) {
	t.Parallel()
	a := newAgent(t)

	p, err := a.Lookup(" proc001\t")
	require.NoError(t, err)
	assert.Equal(t, eligibility.Procedure{Code: "PROC001", Name: "MRI scan", System: eligibility.SystemHealthagents,
		Class: eligibility.Class{Code: "PROC001", Name: "MRI scan", BaseCoverage: 80, PreAuth: true, Index: 1}}, p)

	p, err = a.Lookup("74177")
	require.NoError(t, err)
	assert.Equal(t, eligibility.SystemCPT, p.System)
	assert.Equal(t, 3, p.Class.Index)

	_, err = a.Lookup("0000")
	require.ErrorIs(t, err, eligibility.ErrUnknownProcedure)

	cl := a.Classes()
	require.Len(t, cl, 5)
	for i, c := range cl {
		assert.Equal(t, i+1, c.Index)
	}
	cl[0].BaseCoverage = 1 // a copy: the agent is unaffected
	assert.Equal(t, 80, a.Classes()[0].BaseCoverage)

	procs := a.Procedures()
	assert.GreaterOrEqual(t, len(procs), 45)
	assert.Equal(t, "PROC001", procs[0].Class.Code)
	assert.NotEmpty(t, a.Version())
}

func TestWithCatalogue(t *testing.T) {
	t.Parallel()
	doc := `{"version":"t","classes":[{"code":"PROC001","name":"Scan","base_coverage":50,"pre_auth":false,"index":1}],
	 "procedures":[{"code":"70551","name":"brain MRI","system":"CPT","class":"PROC001"}]}`
	a, err := eligibility.New(eligibility.WithCatalogue([]byte(doc)))
	require.NoError(t, err)
	d, err := a.Check(t.Context(), rec(), "70551", serviceDay)
	require.NoError(t, err)
	assert.Equal(t, 50, d.CoveragePct)
	_, err = a.Lookup("PROC002")
	require.ErrorIs(t, err, eligibility.ErrUnknownProcedure)

	_, err = eligibility.New(eligibility.WithCatalogue(nil))
	require.ErrorIs(t, err, eligibility.ErrCatalogue)
	_, err = eligibility.New(eligibility.WithCatalogue([]byte(`{"classes":[]}`)))
	require.ErrorIs(t, err, eligibility.ErrCatalogue)
}

func BenchmarkCheck(b *testing.B) {
	a := newAgent(b)
	r := rec(func(c *record.Coverage) {
		c.ExcludedProcedures = []string{"PROC005", "70553"}
		c.CoverageOverrides = map[string]int{"PROC002": 70}
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Check(ctx, r, "71046", serviceDay); err != nil {
			b.Fatal(err)
		}
	}
}

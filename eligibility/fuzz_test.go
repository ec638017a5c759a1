package eligibility_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/record"
)

// FuzzCheck feeds arbitrary codes and coverage fields (as a record that did
// not go through record.Parse) to Check: it never panics, fails only with the
// documented errors, and its decisions keep the package's invariants.
func FuzzCheck(f *testing.F) {
	a := newAgent(f)
	f.Add("70551", "active", "2026-01-01", "2026-12-31", "PROC005", "PROC001", 50, int64(1795000000))
	f.Add("proc002", "inactive", "2026-01-01", "2026-12-31", "", "", 0, int64(0))
	f.Add(" g0103 ", "active", "2026-13-01", "x", "g0103", "G0103", 101, int64(-1))
	f.Fuzz(func(t *testing.T, code, status, start, end, excluded, overrideKey string, pct int, unix int64) {
		rec := &record.Record{PatientID: "P", Coverage: &record.Coverage{
			MemberID: "M", Status: status, Start: start, End: end,
			ExcludedProcedures: []string{excluded},
			CoverageOverrides:  map[string]int{overrideKey: pct},
		}}
		d, err := a.Check(context.Background(), rec, code, time.Unix(unix, 0))
		if err != nil {
			require.True(t, errors.Is(err, eligibility.ErrUnknownProcedure) || errors.Is(err, record.ErrMalformed), err)
			return
		}
		require.Equal(t, d.Procedure.Class.PreAuth, d.RequiresAuthorization)
		require.GreaterOrEqual(t, d.CoveragePct, 0)
		require.LessOrEqual(t, d.CoveragePct, 100)
		if !d.Eligible {
			require.Zero(t, d.CoveragePct)
			require.NotEmpty(t, d.Reason)
		} else {
			require.Empty(t, d.Reason)
			require.False(t, d.NoCoverage)
			require.Equal(t, record.StatusActive, status)
		}
		if d.NoCoverage {
			require.False(t, d.Eligible)
		}
	})
}

package zkp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
)

func TestCovers(t *testing.T) {
	t.Parallel()
	cov := &record.Coverage{MemberID: "M1", Status: "active", Start: "2026-01-01", End: "2026-12-31", ExcludedProcedures: []string{"11289"}}
	in := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		cov    func() *record.Coverage
		drug   string
		date   time.Time
		covers bool
	}{
		{"ok/covered", func() *record.Coverage { return cov }, "6809", in, true},
		{"ok/excluded drug", func() *record.Coverage { return cov }, "11289", in, false},
		{"ok/after the window", func() *record.Coverage { return cov }, "6809", in.AddDate(1, 0, 0), false},
		{"ok/inactive", func() *record.Coverage { c := *cov; c.Status = "inactive"; return &c }, "6809", in, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := zkp.Covers(tc.cov(), tc.drug, tc.date)
			require.NoError(t, err)
			assert.Equal(t, tc.covers, got)
		})
	}
	_, err := zkp.Covers(&record.Coverage{MemberID: "M1", Status: "active", Start: "2026-01-01", End: "2026-12-31",
		ExcludedProcedures: []string{"A", "B", "C", "D"}}, "6809", in)
	assert.ErrorIs(t, err, zkp.ErrRecordTooLarge)
}

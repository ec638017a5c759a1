package zkp

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/record"
)

// The circuit's class table is the eligibility agent's.
func TestClassesMatchEligibilityCatalogue(t *testing.T) {
	t.Parallel()
	agent, err := eligibility.New()
	require.NoError(t, err)
	var got []Class
	for _, c := range agent.Classes() {
		got = append(got, Class{Index: c.Index, Code: c.Code, BasePct: c.BaseCoverage, PreAuth: c.PreAuth})
	}
	assert.Equal(t, Classes(), got)
}

// Every decision the eligibility agent takes — over its whole catalogue and
// records that exercise each rule — is a claim the circuit accepts: the
// native rules agree (no ErrUnsatisfied), and for a sample the circuit's
// solver is satisfied too.
func TestEligibilityAgentDecisionsAreProvable(t *testing.T) {
	t.Parallel()
	agent, err := eligibility.New()
	require.NoError(t, err)
	coverages := map[string]*record.Coverage{
		"sample":             sampleCoverage(),
		"inactive":           withStatus(sampleCoverage(), record.StatusInactive),
		"folded override":    withOverrides(map[string]int{"proc001": 50, "Proc003": 20, " 99213 ": 10}),
		"exact beats folded": withOverrides(map[string]int{"proc004": 50, "PROC004": 40}),
		"class exclusions": func() *record.Coverage {
			c := sampleCoverage()
			c.ExcludedProcedures = []string{"proc001", "PROC003", "99213"}
			return c
		}(),
	}
	dates := []string{"2025-12-31", "2026-01-01", "2026-07-04", "2026-12-31", "2027-01-01"}
	var blinding fr.Element
	blinding.SetUint64(5)
	solved := 0
	for name, cov := range coverages {
		rec := &record.Record{Schema: record.Schema, PatientID: "PT-1", Coverage: cov}
		for _, proc := range agent.Procedures() {
			for _, date := range dates {
				d, err := agent.Check(t.Context(), rec, proc.Code, day(date))
				require.NoError(t, err)
				in := EligibilityInput{
					Coverage: cov, ClassIndex: d.Procedure.Class.Index, ClassCode: d.Procedure.Class.Code,
					ProcedureCode: d.ProcedureCode, ServiceDate: d.ServiceDate,
					CoveragePct: d.CoveragePct, PreAuth: d.RequiresAuthorization, Eligible: d.Eligible,
				}
				a, _, err := eligibilityStatement(in, blinding)
				require.NoError(t, err, "%s / %s / %s", name, proc.Code, date)
				if solved < 12 && (proc.Code == "PROC001" || proc.Code == "99213") {
					require.NoError(t, isSolved(&EligibilityCircuit{}, a, ecc.BN254.ScalarField()))
					solved++
				}
			}
		}
	}
}

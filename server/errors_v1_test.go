package server_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/store/storetest"
)

// rootSentinels are every sentinel error of the root package a caller may
// test with errors.Is.
var rootSentinels = map[string]error{
	"ErrPatientNotFound": healthagents.ErrPatientNotFound, "ErrNoInsurance": healthagents.ErrNoInsurance,
	"ErrProofTimeout": healthagents.ErrProofTimeout, "ErrProofRejected": healthagents.ErrProofRejected,
	"ErrProofUnsupported": healthagents.ErrProofUnsupported, "ErrChainUnavailable": healthagents.ErrChainUnavailable,
	"ErrUnauthorized": healthagents.ErrUnauthorized, "ErrRateLimited": healthagents.ErrRateLimited,
	"ErrPrescriptionNotFound": healthagents.ErrPrescriptionNotFound, "ErrInvalidAttestation": healthagents.ErrInvalidAttestation,
}

// errorShape is what a caller's code sees of an error: which root
// sentinels errors.Is matches, and the *healthagents.Error errors.As finds.
type errorShape struct {
	Is     []string
	Code   healthagents.Code
	V1Code string
}

func shapeOf(t *testing.T, err error) errorShape {
	t.Helper()
	require.Error(t, err)
	var s errorShape
	for name, sentinel := range rootSentinels {
		if errors.Is(err, sentinel) {
			s.Is = append(s.Is, name)
		}
	}
	var he *healthagents.Error
	require.ErrorAs(t, err, &he)
	s.Code, s.V1Code = he.Code, healthagents.V1Code(err)
	return s
}

// TestV1ErrorsSameInProcessAndOverHTTP runs each v1 error in process (the
// root package's V1, as a Go program embeds it) and through package client
// against the server serving that same V1, and requires the same
// errors.Is answers for every root sentinel and the same
// *healthagents.Error (errors.As) on both sides. Unauthorized and rate
// limited are the server's own refusals: their in-process side is the
// *healthagents.Error of that code the server answers with.
func TestV1ErrorsSameInProcessAndOverHTTP(t *testing.T) {
	t.Parallel()
	a := v1SharedApp(t)
	timingOut, chainDown := v1FailingAttestors(t, a)
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	working := newV1Env(t, db)
	proofs := newV1EnvWithAttestor(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}), timingOut)
	network := newV1EnvWithAttestor(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}), chainDown)

	// Each env holds the sample patient (the server's key and the
	// in-process owner alike) and one without coverage.
	const org = "clinic-e"
	uninsured := v1Record("PT-NOCOV", func(r *record.Record) { r.Coverage = nil })
	for _, e := range []*v1Env{working, proofs, network} {
		c := e.client(t, apikey.CreateParams{Organization: org})
		for _, r := range []*record.Record{v1Record("PT-E", nil), uninsured} {
			require.NoError(t, c.PutPatient(t.Context(), e.seal(t, r)))
			require.NoError(t, e.v1.PutPatient(t.Context(), "", r.PatientID, e.seal(t, r)))
		}
	}
	elig := func(id string) healthagents.V1EligibilityRequest {
		return healthagents.V1EligibilityRequest{PatientID: id, MemberID: "W123456789", ProcedureCode: "PROC004", ProviderNPI: v1Provider}
	}
	inProcess := func(e *v1Env, id string) func() error {
		return func() error { _, err := e.v1.VerifyEligibility(t.Context(), "", elig(id)); return err }
	}
	overHTTP := func(e *v1Env, id string, p apikey.CreateParams) func() error {
		c := e.client(t, p)
		return func() error { _, err := c.VerifyEligibilityV1(t.Context(), elig(id)); return err }
	}
	member := apikey.CreateParams{Organization: org}
	limited := apikey.CreateParams{Organization: org, Tier: apikey.Pro, DailyQuota: 1}
	anonymous, err := client.New(working.url, client.WithMaxAttempts(1))
	require.NoError(t, err)
	cases := []struct {
		name       string
		inProcess  func() error
		overHTTP   func() error
		status     int
		want       []string // the sentinels both sides match
		wantV1Code string
	}{
		{"patient not found", inProcess(working, "PT-NONE"), overHTTP(working, "PT-NONE", member), http.StatusNotFound,
			[]string{"ErrPatientNotFound"}, healthagents.V1PatientNotFound},
		{"no insurance", inProcess(working, uninsured.PatientID), overHTTP(working, uninsured.PatientID, member), http.StatusUnprocessableEntity,
			[]string{"ErrNoInsurance"}, healthagents.V1NoInsurance},
		{"proof invalid", inProcess(proofs, "PT-E"), overHTTP(proofs, "PT-E", member), http.StatusInternalServerError,
			[]string{"ErrProofTimeout"}, healthagents.V1ProofInvalid},
		{"network error", inProcess(network, "PT-E"), overHTTP(network, "PT-E", member), http.StatusServiceUnavailable,
			[]string{"ErrChainUnavailable"}, healthagents.V1NetworkError},
		{"rate limited",
			func() error { return healthagents.Errorf(healthagents.CodeRateLimited, "Rate limit exceeded") },
			func() error {
				call := overHTTP(working, "PT-NONE", limited)
				_ = call() // the quota's one request
				return call()
			}, http.StatusTooManyRequests, []string{"ErrRateLimited"}, ""},
		{"unauthorized",
			func() error {
				return healthagents.Errorf(healthagents.CodeUnauthorized, "Unauthorized: Invalid API key")
			},
			func() error { _, err := anonymous.VerifyEligibilityV1(t.Context(), elig("PT-E")); return err },
			http.StatusUnauthorized, []string{"ErrUnauthorized"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			local, remote := shapeOf(t, tc.inProcess()), tc.overHTTP()
			over := shapeOf(t, remote)
			assert.ElementsMatch(t, tc.want, local.Is, "in process")
			assert.ElementsMatch(t, local.Is, over.Is, "errors.Is: the same sentinels both ways")
			assert.Equal(t, local.Code, over.Code, "errors.As *healthagents.Error: the same code")
			assert.Equal(t, tc.wantV1Code, local.V1Code)
			assert.Equal(t, local.V1Code, over.V1Code, "the same v1 code")
			var ce *client.Error
			require.ErrorAs(t, remote, &ce, "over HTTP it is also a *client.Error")
			assert.Equal(t, tc.status, ce.StatusCode)
			assert.Equal(t, tc.wantV1Code, ce.V1Code)
		})
	}
}

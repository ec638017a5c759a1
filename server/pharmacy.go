package server

import (
	"net/http"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// pharmacyRoutes: availability attestations written to the pharmacy oracle.
func (s *srv) pharmacyRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/v1/pharmacy/attestations", Scope: apikey.ScopePharmacy, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.v1AttestAvailability), Doc: v1Auth(openapi.Operation{
				OperationID: "attestPharmacyAvailability", Tags: []string{"v1"}, Summary: "Publish a pharmacy availability attestation",
				Description: "Writes (pharmacy_npi, NDC, estimated availability) to the PharmacyOracle contract in a mined transaction; prescription validation reads it back from the chain. Needs the pharmacy scope, which keys get only when created with it (a prescriber's key cannot confirm its own prescriptions). estimated_availability must be a date after 1970-01-01 and at most 366 days after today (UTC), else 400 `Validation error: field 'estimated_availability' must be after 1970-01-01 and at most 366 days after today (UTC)`. 400 `PHARMACY_ERROR: ...` when the oracle refuses the attestation as malformed; 503 `PHARMACY_ERROR: ...` when no oracle is configured or the chain does not answer.",
				Request:     healthagents.V1Attestation{}, Responses: map[int]openapi.Response{http.StatusCreated: {Description: "Written to the chain.", Body: healthagents.V1AttestationResult{}}},
				Errors: []int{400, 401, 403, 413, 429, 500, 503},
			})},
	}
}

func (s *srv) v1AttestAvailability(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	// The route's Scope (apikey.ScopePharmacy) already requires the pharmacy scope
	// (auth.go); checked again so writing to the chain stays closed to
	// other keys if the route moves.
	if k := requestKey(r); k == nil || !k.HasScope(apikey.ScopePharmacy) {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return
	}
	var req healthagents.V1Attestation
	if err := read(w, r, s.opts.maxBody, &req, "pharmacy_npi", "ndc_code", "estimated_availability"); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := v1.AttestAvailability(r.Context(), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, res)
}

package healthagents

// The v1 pharmacy availability: the oracle port, the read made while
// validating a prescription, and attestations.

import (
	"context"
	"errors"
	"time"

	"github.com/healthagents/healthagents/prescription"
)

// Availability is what a pharmacy attested about a drug package.
type Availability struct {
	PharmacyNPI string
	NDC         string    // 11 digits
	AvailableOn time.Time // the date the pharmacy expects to dispense (UTC midnight)
	AttestedAt  time.Time
	Attester    string // the account that wrote the attestation
}

// AttestationReceipt is the record of an availability attestation written
// to the chain.
type AttestationReceipt struct {
	TxHash      string
	BlockNumber uint64
}

// PharmacyOracle reads and writes pharmacy availability attestations on a
// chain. *pharmacy.Oracle is one. Errors reaching the chain wrap
// ErrChainUnavailable; input the oracle refuses as malformed (an NPI, NDC
// or date it cannot store) wraps ErrInvalidAttestation.
type PharmacyOracle interface {
	// Availability returns the attestation for the pharmacy and NDC;
	// found is false when none was published.
	Availability(ctx context.Context, pharmacyNPI, ndc string) (a Availability, found bool, err error)
	// Attest publishes an attestation in a mined transaction.
	Attest(ctx context.Context, a Availability) (AttestationReceipt, error)
}

// pharmacy reads the oracle for every medication: confirmed only when every
// NDC is attested by the pharmacy.
func (v *V1) pharmacy(ctx context.Context, pharmacyNPI string, lines []medLine) (V1PharmacyConfirmation, error) {
	out := V1PharmacyConfirmation{Status: "unconfirmed"}
	if v.oracle == nil || pharmacyNPI == "" {
		return out, nil
	}
	var latest time.Time
	all := true
	for _, l := range lines {
		a, found, err := v.oracle.Availability(ctx, pharmacyNPI, l.ndc)
		if errors.Is(err, ErrInvalidAttestation) {
			return out, v1Error(CodeInvalid, V1PharmacyError, err, "the pharmacy oracle refused pharmacy_npi or an NDC as malformed")
		}
		if err != nil {
			code := CodeInternal
			if errors.Is(err, ErrChainUnavailable) {
				code = CodeUnavailable
			}
			v.svc.logError(ctx, "pharmacy oracle read failed", "err", err)
			return out, v1Error(code, V1PharmacyError, err, "the pharmacy oracle could not be read")
		}
		if !found {
			all = false
			continue
		}
		if a.AvailableOn.After(latest) {
			latest = a.AvailableOn
		}
	}
	out.CrossChainVerified = true
	if all {
		out.Status = "confirmed"
		s := latest.UTC().Format(time.DateOnly)
		out.EstimatedAvailability = &s
	}
	return out, nil
}

// V1Attestation is the body of POST /api/v1/pharmacy/attestations.
type V1Attestation struct {
	PharmacyNPI           string `json:"pharmacy_npi" required:"true" example:"1245319599"`
	NDCCode               string `json:"ndc_code" required:"true" doc:"Any NDC form; stored as 11 digits." example:"0071-0155-23"`
	EstimatedAvailability string `json:"estimated_availability" required:"true" doc:"YYYY-MM-DD: when the pharmacy expects to dispense it." example:"2026-11-24"`
}

// V1AttestationResult answers POST /api/v1/pharmacy/attestations.
type V1AttestationResult struct {
	PharmacyNPI           string `json:"pharmacy_npi"`
	NDCCode               string `json:"ndc_code" doc:"11 digits."`
	EstimatedAvailability string `json:"estimated_availability"`
	BlockchainTx          string `json:"blockchain_tx" doc:"The mined transaction that wrote the attestation to the oracle contract."`
	BlockNumber           uint64 `json:"block_number"`
}

// AttestAvailability writes a pharmacy availability attestation to the
// oracle contract.
func (v *V1) AttestAvailability(ctx context.Context, req V1Attestation) (*V1AttestationResult, error) {
	if err := checkNPI("pharmacy_npi", req.PharmacyNPI); err != nil {
		return nil, err
	}
	ndc, err := prescription.NormalizeNDC(req.NDCCode)
	if err != nil {
		return nil, WrapError(CodeInvalid, err, "Validation error: field 'ndc_code' is not an NDC in 4-4-2, 5-3-2, 5-4-1 or 11-digit form")
	}
	day, err := time.Parse(time.DateOnly, req.EstimatedAvailability)
	if err != nil {
		return nil, Errorf(CodeInvalid, "Validation error: field 'estimated_availability' must be a date YYYY-MM-DD")
	}
	now := v.svc.serviceTime()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if !day.After(time.Unix(0, 0).UTC()) || day.After(today.AddDate(0, 0, MaxAvailabilityDays)) {
		return nil, Errorf(CodeInvalid, "Validation error: field 'estimated_availability' must be after 1970-01-01 and at most %d days after today (UTC)", MaxAvailabilityDays)
	}
	if v.oracle == nil {
		return nil, v1Error(CodeUnavailable, V1PharmacyError, nil, "no pharmacy oracle is configured")
	}
	rc, err := v.oracle.Attest(ctx, Availability{PharmacyNPI: req.PharmacyNPI, NDC: ndc, AvailableOn: day})
	if errors.Is(err, ErrInvalidAttestation) {
		// V1 checked the NPI, NDC and date first, so this is an oracle
		// stricter than V1; still the caller's input, not our failure.
		return nil, v1Error(CodeInvalid, V1PharmacyError, err, "the pharmacy oracle refused the attestation as malformed")
	}
	if err != nil {
		code := CodeInternal
		if errors.Is(err, ErrChainUnavailable) {
			code = CodeUnavailable
		}
		v.svc.logError(ctx, "pharmacy attestation failed", "err", err)
		return nil, v1Error(code, V1PharmacyError, err, "the attestation could not be written")
	}
	return &V1AttestationResult{PharmacyNPI: req.PharmacyNPI, NDCCode: ndc, EstimatedAvailability: day.Format(time.DateOnly),
		BlockchainTx: rc.TxHash, BlockNumber: rc.BlockNumber}, nil
}

package healthagents

// The v1 batch validation.

import (
	"context"
)

// V1BatchItem is one prescription's outcome in a batch: a result or an
// error, never both.
type V1BatchItem struct {
	Result *V1PrescriptionResult
	Err    error
}

// BatchValidate validates up to MaxBatch prescriptions, each independently:
// one failing does not fail the others.
func (v *V1) BatchValidate(ctx context.Context, owner string, reqs []V1PrescriptionRequest) ([]V1BatchItem, error) {
	if len(reqs) == 0 {
		return nil, Errorf(CodeInvalid, "Validation error: field 'prescriptions' must hold at least one prescription")
	}
	if len(reqs) > MaxBatch {
		return nil, Errorf(CodeInvalid, "Validation error: field 'prescriptions' holds more than %d prescriptions", MaxBatch)
	}
	out := make([]V1BatchItem, len(reqs))
	for i, r := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, WrapError(CodeUnavailable, err, "Service temporarily unavailable")
		}
		out[i].Result, out[i].Err = v.ValidatePrescription(ctx, owner, r)
	}
	return out, nil
}

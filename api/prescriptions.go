package api

import "github.com/healthagents/healthagents"

// The v1 batch validation's wire form: POST /api/v1/prescriptions/batch-validate.
// In process (healthagents.V1.BatchValidate) and through the SDK
// (client.BatchValidatePrescriptions) a batch is []healthagents.V1BatchItem,
// each a result or an error.

// BatchValidateRequest is the body of POST /api/v1/prescriptions/batch-validate.
type BatchValidateRequest struct {
	Prescriptions []healthagents.V1PrescriptionRequest `json:"prescriptions" required:"true" minItems:"1" maxItems:"25" doc:"Up to 25 prescriptions, each validated independently."`
}

// BatchValidateEntry is one prescription's outcome on the wire: a result,
// or the status and detail the single endpoint would have answered.
type BatchValidateEntry struct {
	Index  int                                `json:"index" doc:"Position in the request."`
	Status int                                `json:"status" doc:"The HTTP status POST /api/v1/prescriptions/validate would have answered."`
	Result *healthagents.V1PrescriptionResult `json:"result,omitempty"`
	Detail string                             `json:"detail,omitempty" doc:"The error detail, v1 code first, when status is not 200."`
}

// BatchValidateResult answers POST /api/v1/prescriptions/batch-validate.
type BatchValidateResult struct {
	Results   []BatchValidateEntry `json:"results"`
	Succeeded int                  `json:"succeeded" doc:"Items with status 200 (whatever their validation_status)."`
	Failed    int                  `json:"failed"`
}

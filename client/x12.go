package client

import (
	"context"
	"net/http"
)

// X12MediaType is the media type EligibilityX12 sends and reads.
const X12MediaType = "application/edi-x12"

// EligibilityX12 calls POST /api/v1/eligibility/x12 with an X12 270
// interchange (005010X279A1) and returns the service's X12 answer: the 271
// (one per 270 transaction set, each member's questions decided and proven
// as VerifyEligibilityV1 does them, the traces echoed), or the 999 or TA1
// refusing the 270. A member or question that could not be served is an
// AAA inside the 271, not an error. Scope eligibility.
//
// The error is non-nil for a refusal at the HTTP level: 401/403 (*Error,
// no body), and, once the retries are spent, 429 and 503, which still
// return their X12 answer (a 271 with AAA 04 or 42) alongside the *Error.
func (c *Client) EligibilityX12(ctx context.Context, interchange []byte) ([]byte, error) {
	if interchange == nil {
		interchange = []byte{}
	}
	var out []byte
	err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/eligibility/x12", raw: interchange, contentType: X12MediaType,
		accept: X12MediaType, rawOut: &out, rawType: X12MediaType})
	return out, err
}

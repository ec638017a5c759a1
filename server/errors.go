package server

import (
	"net/http"

	"github.com/healthagents/healthagents"
)

// statusOf is the one code → status table of the server. A timeout is a
// 500 with the operation's detail: the API's error statuses (400, 401,
// 403, 404, 413, 422, 429, 500, 503; docs/decisions.md "Errors and
// statuses") have no 504, and a federated training error, its Timeout
// included, is a 500 (TestTimeoutIs500).
var statusOf = map[healthagents.Code]int{
	healthagents.CodeInvalid:       http.StatusBadRequest,
	healthagents.CodeUnauthorized:  http.StatusUnauthorized,
	healthagents.CodeForbidden:     http.StatusForbidden,
	healthagents.CodeNotFound:      http.StatusNotFound,
	healthagents.CodeConflict:      http.StatusConflict,
	healthagents.CodeTooLarge:      http.StatusRequestEntityTooLarge,
	healthagents.CodeUnprocessable: http.StatusUnprocessableEntity,
	healthagents.CodeRateLimited:   http.StatusTooManyRequests,
	healthagents.CodeInternal:      http.StatusInternalServerError,
	healthagents.CodeUnavailable:   http.StatusServiceUnavailable,
	healthagents.CodeTimeout:       http.StatusInternalServerError,
}

// StatusOf returns the HTTP status for an error code (500 for unknown codes).
func StatusOf(c healthagents.Code) int {
	if s, ok := statusOf[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Detail string `json:"detail" doc:"What went wrong. v1 error codes ride in front, e.g. \"NO_INSURANCE: ...\"."`
}

// writeError renders err as {"detail": ...} with the status of its code.
func (s *srv) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := healthagents.ErrorCode(err)
	status := StatusOf(code)
	if status >= 500 && code == healthagents.CodeInternal {
		s.logger.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, ErrorBody{Detail: healthagents.ErrorDetail(err)})
}

// writeDetail renders a status and detail.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, ErrorBody{Detail: detail})
}

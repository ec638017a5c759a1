package openapi

import "net/http"

// errorDescription is the meaning of an error status, as
// docs/decisions.md "Errors and statuses" gives it.
func errorDescription(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "Bad request: missing field, wrong type, malformed JSON, hash or data mismatch."
	case http.StatusUnauthorized:
		return "Unauthorized: missing, invalid or expired API key."
	case http.StatusForbidden:
		return "Forbidden: insufficient permissions, address not whitelisted or restricted account."
	case http.StatusNotFound:
		return "Not found."
	case http.StatusMethodNotAllowed:
		return "Method not allowed."
	case http.StatusConflict:
		return "Conflict with the current state."
	case http.StatusRequestEntityTooLarge:
		return "Request body over the size limit."
	case http.StatusUnprocessableEntity:
		return "Understood but refused (e.g. a drug interaction detected)."
	case http.StatusTooManyRequests:
		return "Rate limit exceeded."
	case http.StatusInternalServerError:
		return "Internal error: proof generation, blockchain, encryption or decryption failure."
	case http.StatusServiceUnavailable:
		return "Service temporarily unavailable: database or blockchain node unreachable, or the server is at capacity (then with Retry-After)."
	case http.StatusGatewayTimeout:
		return "Timed out."
	}
	if t := http.StatusText(code); t != "" {
		return t + "."
	}
	return "Error."
}

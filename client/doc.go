// Package client is the Go SDK for the healthagents HTTP API: typed methods
// for every endpoint, retries with backoff, one error type, pagination as
// iterators, and the helper that seals a patient record into the encrypted
// envelope the API accepts.
//
// # Calls
//
//	c, err := client.New("http://localhost:8000", client.WithAPIKey(key))
//	env, err := client.SealRecord(rec, fernetKey)
//	res, err := c.VerifyEligibility(ctx, env, "PROC001")
//
// The methods have the shapes of [healthagents.Service]'s, and both satisfy
// [Agents], so a program can switch between the in-process agents and a
// remote server by changing one constructor. Per-call settings go through
// [Client.With], which takes the same [Option]s as [New]:
//
//	res, err := c.With(client.WithIdempotencyKey(orderID)).VerifyEligibility(ctx, env, "PROC001")
//
// # Retries
//
// A call is tried up to 3 times ([WithMaxAttempts]) within 30 s in all
// ([WithTimeout]; the caller's ctx also applies). The client retries after a
// connection error and after 408, 429, 502, 503 and 504 — never after 500,
// which the API returns for a failed proof. It repeats only requests that are
// safe to repeat: GET, HEAD, PUT, DELETE, OPTIONS, and requests carrying an
// Idempotency-Key. The client adds a random Idempotency-Key to every POST
// (the same on each attempt of a call), and the server answers a repeated key
// with the first answer instead of doing the work twice;
// [WithAutoIdempotencyKeys](false) turns that off, and then a POST is
// retried only when its connection could not be opened.
//
// Before a retry the client waits what the server asked for — Retry-After
// (seconds or an HTTP date), or on 429 the time until X-RateLimit-Reset —
// and otherwise an exponential backoff with full jitter. A server that asks
// for more than 60 s ([WithMaxRetryWait]) gets no retry: the error comes back
// at once with its [RateLimit]. A wait that would outlast the deadline is not
// started, and cancelling ctx ends a wait at once.
//
// # Errors
//
// A non-2xx answer is an [*Error]: status, [healthagents.Code], the body's
// detail, the v1 code parsed from the detail's prefix
// ("PATIENT_NOT_FOUND: ..."), the rate-limit headers and the request id. It
// unwraps to a [*healthagents.Error], so errors.As and the helpers
// ([IsNotFound], [IsRateLimited], ...) behave the same for remote and
// in-process errors. Transport errors wrap their cause (context.Canceled,
// context.DeadlineExceeded, *net.OpError).
//
// # Lists
//
// List endpoints return iter.Seq2[T, error] built by [Paginate], which
// fetches offset/limit pages as the loop consumes them.
//
// The package imports the root package's wire types, cipher and record, and
// nothing of the server, storage, proofs or chain: a program importing it
// pulls in no gnark, go-ethereum or SQL driver (a test checks this).
package client

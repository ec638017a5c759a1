package server

// POST /api/v1/eligibility/x12: the v1 eligibility check over ASC X12, a
// 270 interchange in and a 271 out, raw (application/edi-x12, text/plain)
// or inside the CAQH CORE connectivity envelope (multipart/form-data).
// The library's V1.EligibilityX12 does the work; this file decodes the
// transport and encodes the answer in kind (docs/x12.md).

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/x12/core"
)

// X12MediaType is the media type of raw X12 bodies (RFC 1767).
const X12MediaType = "application/edi-x12"

// x12Body says how a request carries its 270.
type x12Body int

const (
	x12None x12Body = iota // not an X12 request
	x12Raw                 // application/edi-x12 or text/plain
	x12CORE                // the CORE envelope, multipart/form-data
)

// x12BodyOf reads the request's Content-Type (and the CORE boundary).
func x12BodyOf(r *http.Request) (x12Body, string) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return x12None, ""
	}
	switch mt {
	case X12MediaType, "text/plain":
		return x12Raw, ""
	case "multipart/form-data":
		return x12CORE, params["boundary"]
	}
	return x12None, ""
}

func (s *srv) x12Routes() []route {
	return []route{
		{Method: "POST", Path: "/api/v1/eligibility/x12", Scope: apikey.ScopeEligibility, Class: ratelimit.ClassEligibilityV1, Gate: classProof, Body: SmallBodyBytes,
			Audit: &auditSpec{action: audit.ActionEligibilityVerifyV1}, X12: true,
			Handler: http.HandlerFunc(s.v1EligibilityX12), Doc: v1Auth(openapi.Operation{
				OperationID: "verifyEligibilityX12", Tags: []string{"v1"}, Summary: "Verify eligibility from an X12 270; answered with a 271",
				Description: "Takes an ASC X12 005010X279A1 270 interchange (one or more transaction sets, several subscribers and dependents, several EQ each), raw or inside the CAQH CORE connectivity envelope, and answers one 271 interchange: per member and EQ the decision of POST /api/v1/eligibility/verify — proven, recorded on chain and emitted exactly as there — as EB loops, the 270's TRN echoed as trace type 2, BHT03 kept, control numbers of the service's own. " +
					"Members are found among the caller's registered patients by the 270's payer (2100A NM109), member id (2100C NM109, MI) and name or birth date; the service type codes map onto the catalogue (30: every class; 2, 4, 5, 62: see docs/x12.md); EQ02 `HC:70551` asks for that procedure. " +
					"A member or question that cannot be served gets an AAA (75 not found, 72 no member id, 71/73 birth date or name contradicts the record, 43/51 provider, 62/63 date of service, AG procedure, 04 too many decisions or rate limited, 42 unavailable). " +
					"A 270 failing its syntax or envelope checks gets a 999 (005010X231A1) naming each segment and element, or a TA1 for the interchange; nothing is decided. " +
					"The answer is 200 whatever it holds, 429 or 503 (with Retry-After) when the service refused to decide now, still as X12. 401 and 403 answer as on every route, with {\"detail\"}. " +
					"In the CORE envelope (ProcessingMode RealTime, PayloadType " + core.PayloadType270 + ", PayloadID, TimeStamp, SenderID, ReceiverID, CORERuleVersion, Payload) the answer is the same envelope with PayloadType " + core.PayloadType271 + ", " + core.PayloadType999 + " or " + core.PayloadTypeTA1 + ", ErrorCode Success; an envelope that cannot be processed is 400 with PayloadType CoreEnvelopeError and ErrorCode naming the field. Each decision counts against the eligibility rate limits and daily quota.",
				RequestMedia: map[string]*openapi.Schema{X12MediaType: x12RequestSchema, "text/plain": x12RequestSchema, "multipart/form-data": coreRequestSchema},
				Responses:    x12Responses(),
				Errors:       []int{401, 403, 415},
			})},
	}
}

// x12Responses documents the route's answers: X12 (or the CORE envelope)
// whatever the status, but for 401, 403 and 415.
func x12Responses() map[int]openapi.Response {
	in := func(description string, retry bool) openapi.Response {
		r := openapi.Response{Description: description, Alternates: map[string]*openapi.Schema{X12MediaType: x12ResponseSchema, "multipart/form-data": coreResponseSchema}}
		if retry {
			r.Headers = map[string]openapi.Header{openapi.HeaderRetryAfter: {}}
		}
		return r
	}
	return map[int]openapi.Response{
		http.StatusOK:                    in("The 271, or the 999 or TA1 refusing the 270, raw or in the CORE envelope.", false),
		http.StatusBadRequest:            {Description: "A CORE envelope that cannot be processed: PayloadType CoreEnvelopeError, ErrorCode naming the field.", Alternates: map[string]*openapi.Schema{"multipart/form-data": coreResponseSchema}},
		http.StatusRequestEntityTooLarge: in("An interchange over the route's limit: the TA1 of what was read.", false),
		http.StatusTooManyRequests:       in("Rate limited: the 271 with AAA 04 (R) at every information source, nothing decided.", true),
		http.StatusServiceUnavailable:    in("At capacity or unavailable: the 271 with AAA 42 (R) at every information source, nothing decided.", true),
	}
}

// v1EligibilityX12 decodes the 270 (raw or CORE), calls
// V1.EligibilityX12 with the rate limits as its admission, and encodes
// the answer in kind.
func (s *srv) v1EligibilityX12(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	kind, boundary := x12BodyOf(r)
	if kind == x12None {
		writeDetail(w, http.StatusUnsupportedMediaType, "Invalid request format: Content-Type must be application/edi-x12, text/plain, or multipart/form-data (the CAQH CORE envelope)")
		return
	}
	body, err := readBody(w, r, SmallBodyBytes)
	if err != nil {
		s.writeError(w, r, err) // in X12 by x12Errors
		return
	}
	var env *core.Envelope
	payload := body
	if kind == x12CORE {
		env, err = core.ReadRequest(body, boundary)
		var ce *core.Error
		if errors.As(err, &ce) {
			writeCORE(w, http.StatusBadRequest, core.ErrorAnswer(env, ce, s.x12SenderID(), time.Now()))
			return
		}
		payload = env.Payload
	}
	var refused error
	ans, err := v1.EligibilityX12(r.Context(), v1Owner(r), payload, healthagents.X12Options{
		SenderID: s.x12SenderID(),
		Admit: func(n int) error {
			if e := s.admit(w, r, ratelimit.ClassEligibilityV1, n, "the interchange's questions"); e != nil {
				refused = e
			}
			return refused
		},
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, a := range ans.Accessed {
		status := http.StatusOK
		if a.Code != "" {
			status = StatusOf(a.Code)
		}
		noteItem(r, a.PatientID, status)
	}
	status := http.StatusOK
	if healthagents.ErrorCode(refused) == healthagents.CodeRateLimited {
		status = http.StatusTooManyRequests
	}
	s.writeX12Answer(w, status, env, ans)
}

// writeX12Answer writes an X12 answer raw, or in the CORE envelope that
// asked for it.
func (s *srv) writeX12Answer(w http.ResponseWriter, status int, env *core.Envelope, ans *healthagents.X12Answer) {
	if env == nil {
		h := w.Header()
		h.Set("Content-Type", X12MediaType)
		h.Set("Content-Length", strconv.Itoa(len(ans.Body)))
		w.WriteHeader(status)
		_, _ = w.Write(ans.Body)
		return
	}
	pt := map[string]string{healthagents.X12Kind271: core.PayloadType271, healthagents.X12Kind999: core.PayloadType999, healthagents.X12KindTA1: core.PayloadTypeTA1}[ans.Kind]
	writeCORE(w, status, core.Answer(env, pt, ans.Body, time.Now()))
}

func writeCORE(w http.ResponseWriter, status int, e *core.Envelope) {
	var b bytes.Buffer
	ct, err := core.Write(&b, e)
	if err != nil {
		writeDetail(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// x12SenderID is who answers an interchange whose ISA could not be read.
func (s *srv) x12SenderID() string { return "HEALTHAGENTS" }

// x12Errors answers in X12 the errors the layers around the handler write
// as JSON to an X12 request (the rate limits' 429, the admission gate's
// 503, the body limit's 413): the interchange, as far as it was sent, is
// answered with the AAA the refusal maps to at every information source
// (or its 999 or TA1 when it cannot be read), raw or in the CORE envelope,
// with the refusal's status and headers (Retry-After). 401 and 403 stay
// JSON, as on every route (docs/x12.md, "Errors"). Successful answers pass
// through unbuffered.
func (s *srv) x12Errors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, boundary := x12BodyOf(r)
		if kind == x12None || s.deps.V1 == nil {
			next.ServeHTTP(w, r)
			return
		}
		// Keep what the layers inside read of the body (at most the route's
		// limit and a byte), to answer from it.
		tee := &capped{max: SmallBodyBytes + 1}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, tee), r.Body}
		fw := &fhirErrorWriter{ResponseWriter: w}
		next.ServeHTTP(fw, r)
		if fw.held == nil {
			return
		}
		if fw.status == http.StatusUnauthorized || fw.status == http.StatusForbidden || fw.status == http.StatusUnsupportedMediaType {
			fw.passThrough()
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, SmallBodyBytes+1)) // the rest, when unread, into tee
		payload := tee.buf.Bytes()
		var env *core.Envelope
		if kind == x12CORE {
			e, err := core.ReadRequest(payload, boundary)
			var ce *core.Error
			if errors.As(err, &ce) {
				writeCORE(w, fw.status, core.ErrorAnswer(e, ce, s.x12SenderID(), time.Now()))
				return
			}
			env, payload = e, e.Payload
		}
		code := healthagents.CodeUnavailable
		switch fw.status {
		case http.StatusTooManyRequests:
			code = healthagents.CodeRateLimited
		case http.StatusRequestEntityTooLarge:
			code = healthagents.CodeTooLarge
		}
		ans, err := s.deps.V1.EligibilityX12(r.Context(), "", payload, healthagents.X12Options{
			SenderID: s.x12SenderID(),
			Admit:    func(int) error { return healthagents.Errorf(code, "refused") },
		})
		if err != nil {
			fw.passThrough()
			return
		}
		s.writeX12Answer(w, fw.status, env, ans)
	})
}

// capped keeps the first max bytes written to it.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// passThrough writes the held JSON error as it came.
func (f *fhirErrorWriter) passThrough() {
	h := f.Header()
	h.Set("Content-Length", strconv.Itoa(f.held.Len()))
	f.ResponseWriter.WriteHeader(f.status)
	_, _ = f.ResponseWriter.Write(f.held.Bytes())
	f.held = nil
}

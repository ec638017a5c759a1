package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/healthagents/healthagents"
)

// Registry keeps the endpoints of each owner and is the service's
// healthagents.EventSink.
type Registry struct {
	store  Store
	opts   options
	policy policy

	keyMu sync.Mutex
	key   []byte // pseudonym key, loaded once
}

var _ healthagents.EventSink = (*Registry)(nil)

// NewRegistry returns a Registry over st.
func NewRegistry(st Store, opts ...Option) (*Registry, error) {
	if st == nil {
		return nil, errors.New("webhook: nil store")
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Registry{store: st, opts: o, policy: policy{allowLoopback: o.allowLoopback, resolver: o.resolver}}, nil
}

// Limits on registrations.
const (
	resolveTimeout = 5 * time.Second

	maxURLLength = 2048
	// MaxEndpointsPerOwner bounds how many endpoints one owner registers.
	MaxEndpointsPerOwner = 100
)

func invalid(format string, args ...any) error {
	return healthagents.WrapError(healthagents.CodeInvalid, ErrInvalid, fmt.Sprintf(format, args...))
}

// unavailable wraps a storage failure: 503 for the caller, the cause for
// the logs.
func unavailable(what string, err error) error {
	return healthagents.WrapError(healthagents.CodeUnavailable, fmt.Errorf("webhook: %s: %w", what, err), "Service temporarily unavailable")
}

func notFound() error {
	return healthagents.WrapError(healthagents.CodeNotFound, ErrNotFound, "Webhook endpoint not found")
}

// Create registers an endpoint for owner after checking the request: known
// event names, an absolute https URL (http only with AllowHTTP) without
// credentials or fragment, whose host resolves only to allowed addresses.
func (r *Registry) Create(ctx context.Context, owner string, req CreateRequest) (*Created, error) {
	if owner == "" {
		return nil, errors.New("webhook: empty owner")
	}
	u, err := r.checkURL(ctx, req.URL)
	if err != nil {
		return nil, err
	}
	events, err := checkEvents(req.Events)
	if err != nil {
		return nil, err
	}
	id, err := r.newID("ep_")
	if err != nil {
		return nil, err
	}
	secret, err := newSecret(r.opts.rand)
	if err != nil {
		return nil, err
	}
	stored, err := seal(r.opts.sealer, secret)
	if err != nil {
		return nil, err
	}
	e := StoredEndpoint{
		Endpoint: Endpoint{ID: id, URL: u, Events: events, CreatedAt: r.opts.now().UTC().Truncate(time.Microsecond), Status: StatusActive},
		Owner:    owner,
		Secret:   stored,
	}
	// The store counts and inserts atomically: concurrent registrations
	// never take an owner past the cap.
	if err := r.store.InsertEndpoint(ctx, e, MaxEndpointsPerOwner); err != nil {
		if errors.Is(err, ErrTooManyEndpoints) {
			return nil, healthagents.WrapError(healthagents.CodeInvalid, errors.Join(ErrInvalid, err),
				fmt.Sprintf("Invalid webhook: at most %d endpoints per account", MaxEndpointsPerOwner))
		}
		return nil, unavailable("storing the endpoint", err)
	}
	return &Created{WebhookEndpoint: e.Endpoint, Secret: secret}, nil
}

func (r *Registry) checkURL(ctx context.Context, raw string) (string, error) {
	if raw == "" {
		return "", invalid("Invalid webhook URL: url is required")
	}
	if len(raw) > maxURLLength {
		return "", invalid("Invalid webhook URL: longer than %d characters", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return "", invalid("Invalid webhook URL: not an absolute URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !r.opts.allowHTTP {
			return "", invalid("Invalid webhook URL: must use https")
		}
	default:
		return "", invalid("Invalid webhook URL: must use https")
	}
	if u.User != nil {
		return "", invalid("Invalid webhook URL: credentials in the URL are not accepted")
	}
	if u.Fragment != "" {
		return "", invalid("Invalid webhook URL: fragments are not accepted")
	}
	host := u.Hostname()
	if host == "" {
		return "", invalid("Invalid webhook URL: no host")
	}
	rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	if _, err := r.policy.resolve(rctx, host); err != nil {
		var ae *AddressError
		if errors.Is(err, errNumericHost) {
			return "", healthagents.WrapError(healthagents.CodeInvalid, errors.Join(ErrInvalid, err),
				"Invalid webhook URL: write an IPv4 host as four decimal numbers (a.b.c.d)")
		}
		if errors.As(err, &ae) {
			return "", healthagents.WrapError(healthagents.CodeInvalid, errors.Join(ErrInvalid, err),
				fmt.Sprintf("Invalid webhook URL: the host resolves to a %s address", ae.Reason))
		}
		return "", healthagents.WrapError(healthagents.CodeInvalid, errors.Join(ErrInvalid, err),
			"Invalid webhook URL: the host could not be resolved")
	}
	return u.String(), nil
}

func checkEvents(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, invalid("Invalid webhook: events must name at least one event")
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !knownEvent(n) {
			return nil, invalid("Invalid webhook: unknown event '%s' (known: %s)", truncate(n, 64), strings.Join(Events(), ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns prefix and 16 random base32 characters (80 bits).
func (r *Registry) newID(prefix string) (string, error) {
	return newID(r.opts.rand, prefix)
}

func newID(rnd io.Reader, prefix string) (string, error) {
	b := make([]byte, 10)
	if _, err := io.ReadFull(rnd, b); err != nil {
		return "", fmt.Errorf("webhook: drawing an id: %w", err)
	}
	return prefix + idEncoding.EncodeToString(b), nil
}

// Get returns owner's endpoint id.
func (r *Registry) Get(ctx context.Context, owner, id string) (*Endpoint, error) {
	e, err := r.owned(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	return &e.Endpoint, nil
}

func (r *Registry) owned(ctx context.Context, owner, id string) (StoredEndpoint, error) {
	e, err := r.store.EndpointByID(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && e.Owner != owner) {
		return StoredEndpoint{}, notFound()
	}
	if err != nil {
		return StoredEndpoint{}, unavailable("reading the endpoint", err)
	}
	return e, nil
}

// Pagination limits of every list endpoint: 10 items by default, at most
// 100 (docs/decisions/keys-and-limits.md).
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

func checkPage(p ListParams) error {
	if p.Offset < 0 {
		return invalid("Invalid request format: offset must be 0 or more")
	}
	if p.Limit < 1 || p.Limit > MaxLimit {
		return invalid("Invalid request format: limit must be between 1 and %d", MaxLimit)
	}
	return nil
}

// List pages owner's endpoints, oldest first, with the total count.
func (r *Registry) List(ctx context.Context, owner string, p ListParams) ([]Endpoint, int, error) {
	if err := checkPage(p); err != nil {
		return nil, 0, err
	}
	es, total, err := r.store.ListEndpoints(ctx, owner, p)
	if err != nil {
		return nil, 0, unavailable("listing endpoints", err)
	}
	return es, total, nil
}

// Delete removes owner's endpoint id, with its undelivered messages and
// its attempt history.
func (r *Registry) Delete(ctx context.Context, owner, id string) error {
	if _, err := r.owned(ctx, owner, id); err != nil {
		return err
	}
	if err := r.store.DeleteEndpoint(ctx, id); err != nil {
		if errors.Is(err, ErrNotFound) {
			return notFound()
		}
		return unavailable("deleting the endpoint", err)
	}
	return nil
}

// Attempts pages the delivery attempts to owner's endpoint id, newest
// first.
func (r *Registry) Attempts(ctx context.Context, owner, id string, p ListParams) ([]Attempt, int, error) {
	if err := checkPage(p); err != nil {
		return nil, 0, err
	}
	if _, err := r.owned(ctx, owner, id); err != nil {
		return nil, 0, err
	}
	as, total, err := r.store.ListAttempts(ctx, id, p)
	if err != nil {
		return nil, 0, unavailable("listing attempts", err)
	}
	return as, total, nil
}

// EligibilityVerifiedPayload is the body of an eligibility.verified
// delivery (the events are listed in docs/decisions/webhooks.md).
type EligibilityVerifiedPayload struct {
	Event     string                  `json:"event" doc:"Event name." enum:"eligibility.verified"`
	Timestamp time.Time               `json:"timestamp" doc:"When the decision was taken (ISO 8601, UTC)."`
	Data      EligibilityVerifiedData `json:"data"`
}

// PrescriptionPayload is the body of a prescription.validated or
// prescription.approved delivery.
type PrescriptionPayload struct {
	Event     string           `json:"event" doc:"Event name." enum:"prescription.validated,prescription.approved"`
	Timestamp time.Time        `json:"timestamp" doc:"When the decision was taken (ISO 8601, UTC)."`
	Data      PrescriptionData `json:"data"`
}

// EligibilityVerifiedData is the data of eligibility.verified.
type EligibilityVerifiedData struct {
	PatientID          string `json:"patient_id" doc:"Pseudonym of the patient code, never the code itself: hex HMAC-SHA256 under a secret key of this deployment, over the patient and the receiving account, so it is stable per patient for one account (its events about one patient can be correlated) and differs between accounts (two accounts cannot match their patients by it)."`
	CoveragePercentage int    `json:"coverage_percentage" doc:"Share of the cost the plan covers." minimum:"0" maximum:"100"`
	RequiresAuth       bool   `json:"requires_auth" doc:"Whether the procedure needs prior authorization."`
	Eligible           bool   `json:"eligible" doc:"The eligibility decision."`
	ZKProofVerified    bool   `json:"zk_proof_verified" doc:"Whether the decision's zero-knowledge proof was verified on chain."`
}

// PrescriptionData is the data of prescription.validated and
// prescription.approved.
type PrescriptionData struct {
	PatientID       string `json:"patient_id" doc:"Pseudonym of the patient code, never the code itself: hex HMAC-SHA256 under a secret key, per patient and receiving account (as in eligibility.verified)."`
	Valid           bool   `json:"valid" doc:"Whether the prescription passed validation."`
	ZKProofVerified bool   `json:"zk_proof_verified" doc:"Whether the coverage proof was verified on chain."`
	// PrescriptionID and ValidationStatus come with v1 validations only.
	PrescriptionID   string `json:"prescription_id,omitempty" doc:"v1 only: the stored validation's id, readable through the API with a key of the same owner."`
	ValidationStatus string `json:"validation_status,omitempty" doc:"v1 only: approved, requires_review or rejected." enum:"approved,requires_review,rejected"`
}

// Emit implements healthagents.EventSink: it builds the payload and writes
// it to the outbox, one row per subscribed endpoint, before returning. The
// patient id is replaced by its keyed pseudonym for the receiving owner,
// and only the fields of the event's data type are kept: nothing else from
// e.Data leaves the service.
func (r *Registry) Emit(ctx context.Context, e healthagents.Event) error {
	m, ok, err := r.Prepare(ctx, e)
	if err != nil || !ok {
		return err
	}
	n, err := r.store.Enqueue(ctx, m)
	if err != nil {
		return fmt.Errorf("webhook: writing the outbox: %w", err)
	}
	r.Enqueued(n)
	return nil
}

// Prepare builds the outbox message of e exactly as Emit would, without
// writing it, for a caller that writes it in its own transaction together
// with the result the event reports (package store's PrescriptionOutbox).
// ok is false when the event goes to no endpoint (an anonymous request's
// event under WithTenants). The pseudonym key may be read or created here, so
// call Prepare before opening that transaction. After the commit, pass the
// number of outbox rows written to Enqueued.
func (r *Registry) Prepare(ctx context.Context, e healthagents.Event) (m Message, ok bool, err error) {
	if !knownEvent(e.Type) {
		return Message{}, false, fmt.Errorf("webhook: unknown event %q", e.Type)
	}
	owner := ""
	if r.opts.tenants {
		if e.Owner == "" {
			return Message{}, false, nil // an anonymous request's event goes to no tenant
		}
		owner = e.Owner
	}
	pid, err := r.pseudonym(ctx, owner, e.PatientID)
	if err != nil {
		return Message{}, false, err
	}
	at := e.Time
	if at.IsZero() {
		at = r.opts.now()
	}
	var payload any
	switch e.Type {
	case healthagents.EventEligibilityVerified:
		payload = EligibilityVerifiedPayload{Event: e.Type, Timestamp: at.UTC(), Data: EligibilityVerifiedData{
			PatientID:          pid,
			CoveragePercentage: intOf(e.Data["coverage_percentage"]),
			RequiresAuth:       boolOf(e.Data["requires_auth"]),
			Eligible:           boolOf(e.Data["eligible"]),
			ZKProofVerified:    boolOf(e.Data["zk_proof_verified"]),
		}}
	default:
		payload = PrescriptionPayload{Event: e.Type, Timestamp: at.UTC(), Data: PrescriptionData{
			PatientID: pid, Valid: boolOf(e.Data["valid"]), ZKProofVerified: boolOf(e.Data["zk_proof_verified"]),
			PrescriptionID: stringOf(e.Data["prescription_id"]), ValidationStatus: stringOf(e.Data["validation_status"]),
		}}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return Message{}, false, fmt.Errorf("webhook: encoding the payload: %w", err)
	}
	id, err := r.newID("msg_")
	if err != nil {
		return Message{}, false, err
	}
	return Message{ID: id, Event: e.Type, Owner: owner, Payload: body, CreatedAt: r.opts.now().UTC()}, true, nil
}

// Enqueued tells the registry that n outbox rows were committed: with n > 0
// it calls the WithEnqueueHook function (the local dispatcher's Notify).
// Emit calls it itself; a caller that writes Prepare's messages in its own
// transaction calls it after the commit, never before, so a woken
// dispatcher finds the rows.
func (r *Registry) Enqueued(n int) {
	if n > 0 && r.opts.onEnqueue != nil {
		r.opts.onEnqueue()
	}
}

// pseudonym returns the patient_id an owner's payloads carry for a
// patient: OwnerPseudonym of the patient's reference under the deployment's
// pseudonym key.
func (r *Registry) pseudonym(ctx context.Context, owner, patientID string) (string, error) {
	key, err := r.pseudonymKey(ctx)
	if err != nil {
		return "", err
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(patientID))
	return OwnerPseudonym(hex.EncodeToString(h.Sum(nil)), owner), nil
}

// ownerPseudonymLabel separates this use of a patient reference from any
// other.
const ownerPseudonymLabel = "healthagents webhook patient_id v1\x00"

// OwnerPseudonym returns the data.patient_id that payloads to owner's
// endpoints carry for a patient, from the patient's deployment-wide
// reference patientRef: the hex HMAC-SHA256 of the patient id under the
// deployment's pseudonym key, which is the patient_ref of the audit log.
// It is the hex HMAC-SHA256, keyed with patientRef (its 64 hex characters),
// of a fixed label and owner. So one patient has a different pseudonym
// towards each owner (two tenants cannot link their patients by it), while
// whoever reads the audit log (an administrator) can still match an entry
// to the deliveries it caused. owner is "" when the Registry has no
// WithTenants (a single-tenant deployment: every endpoint gets the same one).
func OwnerPseudonym(patientRef, owner string) string {
	h := hmac.New(sha256.New, []byte(patientRef))
	h.Write([]byte(ownerPseudonymLabel))
	h.Write([]byte(owner))
	return hex.EncodeToString(h.Sum(nil))
}

func (r *Registry) pseudonymKey(ctx context.Context) ([]byte, error) {
	r.keyMu.Lock()
	defer r.keyMu.Unlock()
	if r.key != nil {
		return r.key, nil
	}
	cand := make([]byte, 32)
	if _, err := io.ReadFull(r.opts.rand, cand); err != nil {
		return nil, fmt.Errorf("webhook: drawing the pseudonym key: %w", err)
	}
	key, err := r.store.PseudonymKey(ctx, cand)
	if err != nil {
		return nil, fmt.Errorf("webhook: loading the pseudonym key: %w", err)
	}
	if len(key) < 32 {
		return nil, errors.New("webhook: stored pseudonym key is too short")
	}
	r.key = key
	return key, nil
}

func intOf(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case int32:
		return int(x)
	case float64:
		return int(x)
	case json.Number:
		n, _ := x.Int64()
		return int(n)
	}
	return 0
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func boolOf(v any) bool {
	b, _ := v.(bool)
	return b
}

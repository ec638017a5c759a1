package server

import (
	"errors"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/healthagents/healthagents"
)

// Load shedding. The proof endpoints cost about 80 ms of CPU each (a Groth16
// proof and a mined verification transaction) and the federated
// submissions tens of milliseconds, so a burst above what the cores can
// prove would otherwise queue without bound: every waiting request holds a
// goroutine, its body and its client's patience, and latency grows for
// everyone. Instead, a fixed number of heavy requests run at once, a short
// queue absorbs bursts, and beyond that the server answers 503
// `Service temporarily unavailable` with Retry-After at once. Cheap routes
// (/health, /status, keys, documentation) never pass through a gate.
//
// There is one gate per class of heavy route, each with its own slots and
// queue: the proof routes wait on the prover and on the chain (up to 10 s
// for a submission), the federated routes on neither, so a stalled chain
// that holds every proof slot never sheds a federated submission.
//
// A gate sits inside authentication and rate limiting (a caller over its
// limit still gets 429, and a refused key never occupies a slot) and
// outside body reading (a queued request holds no body), so the bodies of
// heavy requests without an Idempotency-Key are bounded by the slots of
// each class × its route's body limit (see limits.go for the others).

// Admission defaults, per GOMAXPROCS: one heavy request per core in flight
// (a proof already uses every core; more in flight only adds latency) and a
// queue eight deep per slot, waited in for at most DefaultAdmissionWait.
// On 2 cores that is 2 running and 16 waiting: a burst of a dozen parallel
// calls (a clinic's batch, a retrying client) is served in full, about
// 6 × 80 ms of proving for the last one, while a sustained overload fills
// the queue and the rest is shed at once. The wait bound is a backstop for
// a stalled dependency (a chain that does not mine), not the normal limit:
// a full queue drains in about a second on 2 cores.
const (
	// AdmissionQueuePerSlot is the default queue depth per slot.
	AdmissionQueuePerSlot = 8
	// DefaultAdmissionWait bounds the time a heavy request waits in the
	// admission queue before it is shed with 503.
	DefaultAdmissionWait = 5 * time.Second
	// shedRetryAfter is the Retry-After, in seconds, of a shed request.
	shedRetryAfter = "1"
)

// gateClass names an admission gate. Routes of one class share its slots
// and queue; classes never wait for each other.
type gateClass string

const (
	// classProof: the routes that prove and verify on the chain.
	classProof gateClass = "proof"
	// classFederated: the federated routes that decrypt, train or store
	// masked updates, with no proof and no chain.
	classFederated gateClass = "federated"
)

// admissionOptions size the gate; zero values take the defaults.
type admissionOptions struct {
	maxInFlight int
	maxQueue    int
	queueSet    bool
	maxWait     time.Duration
}

// WithMaxInFlight sets how many heavy requests of each class run at once
// (default GOMAXPROCS): n proof requests (eligibility, prescriptions) and,
// separately, n federated submissions, so at most 2n heavy requests in all.
// Unless WithAdmissionQueue says otherwise, each class's queue is eight times
// as deep.
func WithMaxInFlight(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return errors.New("server: max in-flight must be at least 1")
		}
		o.admission.maxInFlight = n
		return nil
	}
}

// WithAdmissionQueue sets how many heavy requests of each class may wait
// for a slot (0: none, shed at once) and for how long at most (default
// DefaultAdmissionWait). A request beyond the queue, or waiting longer,
// gets 503 with Retry-After.
func WithAdmissionQueue(n int, maxWait time.Duration) Option {
	return func(o *options) error {
		if n < 0 {
			return errors.New("server: admission queue must not be negative")
		}
		if maxWait < 0 {
			return errors.New("server: admission wait must not be negative")
		}
		o.admission.maxQueue, o.admission.queueSet, o.admission.maxWait = n, true, maxWait
		return nil
	}
}

// admission is the gate in front of the heavy routes of one class.
type admission struct {
	slots    chan struct{}
	waiting  atomic.Int64
	maxQueue int64
	maxWait  time.Duration
	onShed   func()              // counts a refusal (metrics); may be nil
	onWait   func(time.Duration) // observes a queued request's wait (metrics); may be nil
}

// newGates returns one gate per class, each sized by o.
func newGates(o admissionOptions) map[gateClass]*admission {
	return map[gateClass]*admission{classProof: newAdmission(o), classFederated: newAdmission(o)}
}

func newAdmission(o admissionOptions) *admission {
	n := o.maxInFlight
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	q := o.maxQueue
	if !o.queueSet {
		q = AdmissionQueuePerSlot * n
	}
	wait := o.maxWait
	if wait == 0 {
		wait = DefaultAdmissionWait
	}
	return &admission{slots: make(chan struct{}, n), maxQueue: int64(q), maxWait: wait}
}

// admit runs next once a slot is free, waiting in the bounded queue for at
// most maxWait; otherwise it sheds. A client that goes away while queued
// leaves the queue at once; one that goes away while running cancels the
// request context, which the prover and the chain submission honour.
func (a *admission) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case a.slots <- struct{}{}:
		default:
			if !a.wait(r) {
				if a.onShed != nil {
					a.onShed()
				}
				w.Header().Set("Retry-After", shedRetryAfter)
				writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
				return
			}
		}
		// The attestor gives the slot back early (healthagents.ReleaseSlot)
		// when a proven decision only waits for its batch on chain.
		var once sync.Once
		release := func() { once.Do(func() { <-a.slots }) }
		defer release()
		next.ServeHTTP(w, r.WithContext(healthagents.WithSlotRelease(r.Context(), release)))
	})
}

// wait queues for a slot, reporting whether one was taken.
func (a *admission) wait(r *http.Request) bool {
	if a.waiting.Add(1) > a.maxQueue {
		a.waiting.Add(-1)
		return false
	}
	defer a.waiting.Add(-1)
	start := time.Now()
	t := time.NewTimer(a.maxWait)
	defer t.Stop()
	admitted := false
	select {
	case a.slots <- struct{}{}:
		admitted = true
	case <-t.C:
	case <-r.Context().Done():
	}
	if a.onWait != nil {
		a.onWait(time.Since(start))
	}
	return admitted
}

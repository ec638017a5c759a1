package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Dispatcher delivers the outbox. Several may run over one database (one per
// replica): a delivery is leased to one of them at a time.
//
// It keeps at most WithConcurrency attempts in flight and claims a delivery
// whenever one of those slots is free, so a slow receiver holds one slot
// and never the others; the Queue caps the deliveries of one endpoint in
// flight (WithEndpointConcurrency) and takes owners in turn.
type Dispatcher struct {
	queue  Queue
	opts   options
	client *http.Client
	// dialer opens every connection of client; its Control function
	// checks the address of each socket before it connects.
	dialer *net.Dialer
	holder string

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	wake    chan struct{}
	started bool
}

// MaxResponseHeaderBytes bounds the header of a receiver's reply; a longer
// one fails the attempt (class connection).
const MaxResponseHeaderBytes = 32 << 10

// recordTimeout bounds the write that records an attempt.
const recordTimeout = 10 * time.Second

// NewDispatcher returns a Dispatcher over q. It delivers nothing until Start
// (or RunOnce).
func NewDispatcher(q Queue, opts ...Option) (*Dispatcher, error) {
	if q == nil {
		return nil, errors.New("webhook: nil queue")
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	holder, err := newID(o.rand, "wrk_")
	if err != nil {
		return nil, err
	}
	p := policy{allowLoopback: o.allowLoopback, resolver: o.resolver}
	nd := p.netDialer(o.timeout)
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would dial for us, past the address check
		DialContext:            p.dialer(nd),
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    o.timeout,
		ResponseHeaderTimeout:  o.timeout,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   o.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is a failed attempt
		},
	}
	return &Dispatcher{queue: q, opts: o, client: client, dialer: nd, holder: holder, wake: make(chan struct{}, 1)}, nil
}

// Start runs the delivery loop in a goroutine until ctx ends or Close is
// called. It claims deliveries whenever an attempt slot is free: at once
// after an attempt ends, after Notify, and at every poll interval.
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		return errors.New("webhook: dispatcher already started")
	}
	d.started = true
	ctx, d.cancel = context.WithCancel(ctx)
	d.done = make(chan struct{})
	go d.loop(ctx)
	return nil
}

// Notify asks a started Dispatcher to poll now (after an Emit) instead of at
// the next tick. It never blocks.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Close stops the loop and waits for the attempts in flight. Deliveries
// whose attempt was cut short are taken over by another Dispatcher when
// their lease runs out.
func (d *Dispatcher) Close() error {
	d.mu.Lock()
	cancel, done := d.cancel, d.done
	d.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	d.client.CloseIdleConnections()
	return nil
}

// pool runs attempts, at most concurrency at once.
type pool struct {
	d        *Dispatcher
	running  int           // owned by the claiming goroutine
	finished chan struct{} // one value per ended attempt
	wg       sync.WaitGroup
	started  atomic.Int64 // attempts actually started
	report   func(error)  // called from attempt goroutines
}

func (d *Dispatcher) newPool(report func(error)) *pool {
	return &pool{d: d, finished: make(chan struct{}, d.opts.concurrency), report: report}
}

// fill claims as many deliveries as there are free slots (due at now) and
// starts them; it returns how many it claimed.
func (p *pool) fill(ctx context.Context, now time.Time) (int, error) {
	d := p.d
	free := d.opts.concurrency - p.running
	if free <= 0 {
		return 0, nil
	}
	jobs, err := d.queue.Claim(ctx, ClaimParams{
		Holder: d.holder, Now: now, LeaseUntil: d.opts.now().Add(d.opts.lease),
		Limit: free, PerEndpoint: d.opts.perEndpoint,
	})
	if err != nil {
		return 0, fmt.Errorf("webhook: claiming deliveries: %w", err)
	}
	for _, j := range jobs {
		p.running++
		p.wg.Go(func() {
			defer func() { p.finished <- struct{}{} }()
			started, err := d.deliver(ctx, j)
			if started {
				p.started.Add(1)
			}
			if err != nil {
				p.report(err)
			}
		})
	}
	return len(jobs), nil
}

func (d *Dispatcher) loop(ctx context.Context) {
	defer close(d.done)
	t := time.NewTicker(d.opts.poll)
	defer t.Stop()
	p := d.newPool(func(err error) {
		if ctx.Err() == nil {
			d.opts.logger.WarnContext(ctx, "webhook delivery failed", "err", err)
		}
	})
	defer p.wg.Wait() // runs before close(d.done)
	var pruned time.Time
	for {
		if now := d.opts.now(); now.Sub(pruned) >= time.Hour {
			if _, err := d.Prune(ctx); err != nil && ctx.Err() == nil {
				d.opts.logger.WarnContext(ctx, "webhook outbox prune failed", "err", err)
			}
			pruned = now
		}
		if _, err := p.fill(ctx, d.opts.now()); err != nil && ctx.Err() == nil {
			d.opts.logger.WarnContext(ctx, "webhook outbox poll failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-p.finished:
			p.running--
		drain:
			for {
				select {
				case <-p.finished:
					p.running--
				default:
					break drain
				}
			}
		case <-t.C:
		case <-d.wake:
		}
	}
}

// Prune deletes the attempt records and finished messages older than the
// retention period, and the undelivered messages of endpoints disabled
// longer ago than that. A started Dispatcher calls it hourly.
func (d *Dispatcher) Prune(ctx context.Context) (int, error) {
	n, err := d.queue.Prune(ctx, d.opts.now().Add(-d.opts.retention))
	if err != nil {
		return 0, fmt.Errorf("webhook: pruning the outbox: %w", err)
	}
	return n, nil
}

// RunOnce delivers what is due now (by the Dispatcher's clock): it claims
// deliveries as attempt slots free up, exactly as a started Dispatcher
// does, until none due at that instant is left to claim and every attempt
// has been recorded. It returns how many attempts it started.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	now := d.opts.now()
	var (
		mu   sync.Mutex
		errs []error
	)
	p := d.newPool(func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() })
	var claimErr error
	for {
		if claimErr == nil {
			n, err := p.fill(ctx, now)
			claimErr = err
			if n == 0 && p.running == 0 {
				break
			}
		}
		if p.running == 0 {
			break
		}
		<-p.finished
		p.running--
	}
	p.wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return int(p.started.Load()), errors.Join(append(errs, claimErr)...)
}

// deliver makes one attempt and records it; started is false when no
// request was made because too little of the lease was left.
func (d *Dispatcher) deliver(ctx context.Context, j Job) (started bool, err error) {
	start := d.opts.now()
	if !j.LeaseUntil.IsZero() && start.Add(d.opts.timeout+LeaseMargin).After(j.LeaseUntil) {
		// Claimed too long ago (a slow claim, a clock jump): another
		// dispatcher could take the delivery over mid-attempt. Leave it
		// to the next claim once the lease runs out.
		d.opts.logger.WarnContext(ctx, "webhook delivery not started: its lease is about to run out",
			"message", j.MessageID, "endpoint", j.EndpointID)
		return false, nil
	}
	res := d.attempt(ctx, j, start)
	if res.status == 0 && ctx.Err() != nil {
		// Stopped mid-attempt (Close): not the receiver's failure. The
		// lease runs out and the message is attempted again, same id.
		return true, nil
	}
	id, err := newID(d.opts.rand, "att_")
	if err != nil {
		return true, err
	}
	now := d.opts.now()
	a := Attempt{
		ID: id, MessageID: j.MessageID, EndpointID: j.EndpointID, Event: j.Event,
		Number: j.Attempts + 1, At: start.UTC(), StatusCode: res.status,
		LatencyMS: res.latency.Milliseconds(), Error: res.class, Response: res.body,
	}
	o := Outcome{Job: j, Holder: d.holder, Now: now}
	switch {
	case res.status >= 200 && res.status < 300:
		o.Delivered, a.Result = true, ResultDelivered
	case res.status == http.StatusGone:
		o.Disable, a.Result = ReasonGone, ResultDisabled
	default:
		failingSince := j.FailingSince
		if failingSince.IsZero() {
			failingSince = start
		}
		switch {
		case now.Sub(failingSince) >= d.opts.disableAfter:
			o.Disable, a.Result = ReasonFailing, ResultDisabled
		case j.Attempts+1 < len(d.opts.schedule):
			delay := d.jittered(d.opts.schedule[j.Attempts+1])
			if res.retryAfter > delay {
				delay = min(res.retryAfter, max(d.opts.maxRetryAfter, delay))
			}
			o.NextAt = now.Add(delay)
			a.Result, a.NextAttempt = ResultRetrying, o.NextAt.UTC()
		default:
			a.Result = ResultFailed
		}
	}
	o.Attempt = a
	// Recording must survive the caller's cancellation: the attempt was made.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err = d.queue.Finish(rctx, o)
	if d.opts.onAttempt != nil && (err == nil || errors.Is(err, ErrLeaseLost)) {
		d.opts.onAttempt(a.Result) // recorded either way
	}
	if errors.Is(err, ErrLeaseLost) {
		d.opts.logger.WarnContext(ctx, "webhook delivery lease lost: the attempt is recorded, the delivery left to its new holder",
			"message", j.MessageID, "endpoint", j.EndpointID)
		return true, nil
	}
	if err != nil {
		return true, fmt.Errorf("webhook: recording attempt of %s: %w", j.MessageID, err)
	}
	if o.Disable != "" {
		d.opts.logger.WarnContext(ctx, "webhook endpoint disabled", "endpoint", j.EndpointID, "reason", o.Disable)
	}
	return true, nil
}

// jittered spreads a retry delay by up to ±jitter of itself, to the
// microsecond (the store's resolution).
func (d *Dispatcher) jittered(delay time.Duration) time.Duration {
	if d.opts.jitter == 0 || delay <= 0 {
		return delay
	}
	var b [8]byte
	if _, err := io.ReadFull(d.opts.rand, b[:]); err != nil {
		return delay
	}
	u := float64(binary.BigEndian.Uint64(b[:])>>11) / (1 << 53) // [0, 1)
	f := (2*u - 1) * d.opts.jitter
	return (delay + time.Duration(float64(delay)*f)).Round(time.Microsecond)
}

type result struct {
	status     int
	latency    time.Duration
	class      string
	body       string
	retryAfter time.Duration
}

// Failure classes of an attempt.
const (
	ClassTimeout        = "timeout"
	ClassConnection     = "connection"
	ClassAddressRefused = "address_refused"
	ClassTLS            = "tls"
	ClassRedirect       = "redirect"
	ClassHTTPStatus     = "http_status"
	// ClassSecret: the endpoint's stored secret could not be opened (a
	// sealer key missing from the keyring); nothing was sent.
	ClassSecret = "secret"
)

func (d *Dispatcher) attempt(ctx context.Context, j Job, at time.Time) result {
	secret, err := unseal(d.opts.sealer, j.Secret)
	if err != nil {
		d.opts.logger.ErrorContext(ctx, "webhook secret cannot be opened", "endpoint", j.EndpointID, "err", err)
		return result{class: ClassSecret}
	}
	sig, err := Sign(secret, j.MessageID, at, j.Payload)
	if err != nil {
		return result{class: ClassSecret}
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Payload))
	if err != nil {
		return result{class: ClassConnection}
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "healthagents-webhooks/1")
	h.Set(HeaderID, j.MessageID)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, sig)
	started := time.Now() // latency is measured on the wall clock, whatever clock schedules
	resp, err := d.client.Do(req)
	lat := time.Since(started)
	if err != nil {
		return result{latency: lat, class: classify(err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, ResponseLimit))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // reuse the connection if cheap
	r := result{status: resp.StatusCode, latency: lat, body: cleanBody(body)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		r.class = ClassRedirect
	default:
		r.class = ClassHTTPStatus
		r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), d.opts.now())
	}
	return r
}

func classify(err error) string {
	var ae *AddressError
	var ne net.Error
	var te *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ae) || errors.Is(err, ErrUnsafeAddress):
		return ClassAddressRefused
	case errors.As(err, &te):
		return ClassTLS
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return ClassTimeout
	case strings.Contains(err.Error(), "tls:"):
		return ClassTLS
	default:
		return ClassConnection
	}
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	const limit = 365 * 24 * time.Hour // far beyond any cap; keeps arithmetic in range
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(limit/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), limit)
	}
	return 0
}

// cleanBody keeps printable UTF-8 of a reply prefix.
func cleanBody(b []byte) string {
	s := strings.ToValidUTF8(string(b), "")
	if !utf8.ValidString(s) {
		return ""
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s)
}

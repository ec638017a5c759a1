package app

import (
	"context"
	"errors"
	"math/big"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// The service's own metrics and spans beyond the HTTP layer's
// (server/metrics.go, server/tracing.go): how long proofs and chain
// confirmations take, what the webhook outbox holds and how its attempts
// end, which phase the federated round is in. Every label is from a fixed
// set (circuit names, outcomes, attempt results, phases), never a request
// value; spans carry a circuit name at most.

// observer holds the instruments; one per App.
type observer struct {
	tracer     trace.Tracer
	proof      *prometheus.HistogramVec
	chain      *prometheus.HistogramVec
	deliveries *prometheus.CounterVec
}

// latencyBuckets span a fast proof on an idle machine (tens of ms) to the
// chain's 10 s submission deadline.
var latencyBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func newObserver(reg *prometheus.Registry, tp trace.TracerProvider) (*observer, error) {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	o := &observer{
		tracer: tp.Tracer("github.com/healthagents/healthagents/app"),
		proof: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "healthagents_proof_duration_seconds", Help: "Time to make a Groth16 proof, by circuit and outcome (ok, error).",
			Buckets: latencyBuckets,
		}, []string{"circuit", "outcome"}),
		chain: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "healthagents_chain_confirmation_duration_seconds", Help: "Time from submitting a proof's verification transaction to its confirmation, by circuit and outcome (verified, rejected, unavailable, error).",
			Buckets: latencyBuckets,
		}, []string{"circuit", "outcome"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "healthagents_webhook_attempts_total", Help: "Webhook delivery attempts made by this replica, by result (delivered, retrying, failed, disabled).",
		}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{o.proof, o.chain, o.deliveries} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// span starts an internal span named name with only the circuit as an
// attribute; end it with the step's error.
func (o *observer) span(ctx context.Context, name, circuit string) (context.Context, func(error)) {
	ctx, s := o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	s.SetAttributes(attribute.String("healthagents.circuit", circuit))
	return ctx, func(err error) {
		if err != nil {
			s.SetStatus(codes.Error, name+" failed") // the error's text may quote a field
		}
		s.End()
	}
}

// observedProver times every proof and makes it a "prove" span.
type observedProver struct {
	next attest.Prover
	o    *observer
}

func (p observedProver) ProveEligibilityV3(ctx context.Context, in zkp.EligibilityV3Input) (*zkp.Proof, statement.Statement, error) {
	var st statement.Statement
	proof, err := observeProof(ctx, p.o, zkp.CircuitEligibilityV3, func(ctx context.Context) (*zkp.Proof, error) {
		proof, s, err := p.next.ProveEligibilityV3(ctx, in)
		st = s
		return proof, err
	})
	return proof, st, err
}

func (p observedProver) ProvePrescriptionV4(ctx context.Context, in zkp.PrescriptionV4Input) (*zkp.Proof, statement.Statement, []zkp.PrescriptionV4Outcome, error) {
	var st statement.Statement
	var outs []zkp.PrescriptionV4Outcome
	proof, err := observeProof(ctx, p.o, zkp.CircuitPrescriptionV4, func(ctx context.Context) (*zkp.Proof, error) {
		proof, s, o, err := p.next.ProvePrescriptionV4(ctx, in)
		st, outs = s, o
		return proof, err
	})
	return proof, st, outs, err
}

func observeProof(ctx context.Context, o *observer, circuit string, prove func(context.Context) (*zkp.Proof, error)) (*zkp.Proof, error) {
	ctx, end := o.span(ctx, "prove", circuit)
	start := time.Now()
	proof, err := prove(ctx)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	o.proof.WithLabelValues(circuit, outcome).Observe(time.Since(start).Seconds())
	end(err)
	return proof, err
}

// observedLedger times every submission until its confirmation and makes
// it a "chain" span.
type observedLedger struct {
	next attest.Ledger
	o    *observer
}

func (l observedLedger) Submit(ctx context.Context, kind chain.Kind, proof [8]*big.Int, inputs []*big.Int) (chain.Receipt, error) {
	circuit := string(kind)
	ctx, end := l.o.span(ctx, "chain", circuit)
	start := time.Now()
	rc, err := l.next.Submit(ctx, kind, proof, inputs)
	outcome := "verified"
	switch {
	case err == nil && !rc.Verified, errors.Is(err, chain.ErrRejected):
		outcome = "rejected"
	case errors.Is(err, chain.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		outcome = "unavailable"
	case err != nil:
		outcome = "error"
	}
	l.o.chain.WithLabelValues(circuit, outcome).Observe(time.Since(start).Seconds())
	end(err)
	return rc, err
}

// outboxCollector reports the webhook outbox's depth at each scrape (one
// COUNT over the pending deliveries of every replica, at most 2 s).
type outboxCollector struct {
	st   *store.WebhookStore
	desc *prometheus.Desc
}

func newOutboxCollector(st *store.WebhookStore) *outboxCollector {
	return &outboxCollector{st: st, desc: prometheus.NewDesc("healthagents_webhook_outbox_pending",
		"Webhook deliveries waiting in the outbox (pending, across replicas).", nil, nil)}
}

func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.st.PendingDeliveries(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}

// federatedCollector reports the current federated round: its number, its
// participants, and its phase as one gauge per phase (1 for the current).
type federatedCollector struct {
	coord                     server.FederatedCoordinator // the replica set's (leasedCoordinator)
	round, phase, participant *prometheus.Desc
}

// federatedPhases are every phase a round goes through, for the gauge.
var federatedPhases = []federated.Phase{federated.PhaseAdvertiseKeys, federated.PhaseShareKeys, federated.PhaseMaskedInput,
	federated.PhaseUnmasking, federated.PhaseClosed, federated.PhaseAbandoned}

func newFederatedCollector(c server.FederatedCoordinator) *federatedCollector {
	return &federatedCollector{coord: c,
		round:       prometheus.NewDesc("healthagents_federated_round", "Number of the current federated round.", nil, nil),
		phase:       prometheus.NewDesc("healthagents_federated_round_phase", "1 for the phase the current federated round is in, 0 for the others.", []string{"phase"}, nil),
		participant: prometheus.NewDesc("healthagents_federated_round_participants", "Organizations taking part in the current federated round.", nil, nil),
	}
}

func (c *federatedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.round
	ch <- c.phase
	ch <- c.participant
}

func (c *federatedCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := c.coord.Status(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.round, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.round, prometheus.GaugeValue, float64(s.Round))
	ch <- prometheus.MustNewConstMetric(c.participant, prometheus.GaugeValue, float64(s.Participants))
	for _, p := range federatedPhases {
		v := 0.0
		if p == s.Phase {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.phase, prometheus.GaugeValue, v, string(p))
	}
}

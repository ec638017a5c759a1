package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ipfs"
	"github.com/healthagents/healthagents/issuers"
	"github.com/healthagents/healthagents/pharmacy"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/webhook"
	"github.com/healthagents/healthagents/zkp"
	"github.com/prometheus/client_golang/prometheus"
)

// App is the whole service, assembled from a Config.
type App struct {
	Config  Config
	Keyring *cipher.Keyring
	ZK      *zkp.System
	Ledger  *chain.Ledger
	// Metrics is the Prometheus registry served at GET /metrics: the
	// server's request, refusal and gate metrics, the database pool, and
	// the Go runtime and process.
	Metrics *prometheus.Registry
	// ChainRPCAddr is where the read-only chain JSON-RPC listens
	// (CHAIN_RPC_LISTEN); empty when it is not served.
	ChainRPCAddr string
	DB           *store.DB
	Keys         *apikey.Service
	Limiter      *ratelimit.Limiter
	// Webhooks keeps endpoints and takes the service's events into the
	// outbox; Dispatcher delivers them until Close.
	Webhooks   *webhook.Registry
	Dispatcher *webhook.Dispatcher
	Service    *healthagents.Service
	// V1 serves the /api/v1 eligibility and prescription operations over
	// the patient registry and stored validations in DB.
	V1      *healthagents.V1
	Handler http.Handler
	// Pharmacy is the pharmacy availability oracle on Ledger's chain (nil
	// with CHAIN_ENDPOINT and no PHARMACY_ORACLE); see pharmacy.go.
	Pharmacy *pharmacy.Oracle

	// IPFS is the Kubo node of IPFS_ENDPOINT on which registered envelopes'
	// ciphertext is kept pinned (app/ipfs.go); nil without one.
	IPFS *ipfs.Client
	// Audit is the access audit log in DB (app/audit.go).
	Audit *audit.Log
	// Issuers is the payer registry (database and chain) behind
	// /api/v1/issuers; Trust is the COVERAGE_TRUST policy that picks the
	// credential each decision is proven with (app/issuers.go).
	Issuers *issuers.Registry
	Trust   *trust.Policy

	logger  *slog.Logger
	closers []io.Closer
	// observer holds the proof, chain and webhook instruments and the
	// app's tracer (observe.go); tracerProvider exports spans by OTLP, nil
	// without OTEL_EXPORTER_OTLP_ENDPOINT (tracing.go).
	observer       *observer
	tracerProvider trace.TracerProvider
	bootstrapToken string
}

// proofTimeout is the deadline of a service's proofs when
// Config.ProofTimeout is zero: the spec's 5 s (zkp.DefaultTimeout). This
// package's tests lengthen it (export_test.go): they run on machines whose
// load no service would accept, and what they check is the answer, not how
// fast it came (server.TestProofTimeout checks the timeout's answer).
var proofTimeout = zkp.DefaultTimeout

// Open assembles the service. Close releases what it opened. It prints
// nothing: a one-time bootstrap token, when one is issued, is kept for the
// program serving the API to show (BootstrapToken, WriteBootstrap).
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (a *App, err error) {
	return OpenWithOutput(ctx, cfg, logger, io.Discard)
}

// OpenWithOutput is Open, then WriteBootstrap(out, "http://localhost:<Port>").
func OpenWithOutput(ctx context.Context, cfg Config, logger *slog.Logger, out io.Writer) (*App, error) {
	a, err := open(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	if err := a.WriteBootstrap(out, fmt.Sprintf("http://localhost:%d", cfg.Port)); err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return a, nil
}

func open(ctx context.Context, cfg Config, logger *slog.Logger) (a *App, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	// Every setting, and what it names outside the process, before
	// anything is created or printed (preflight.go).
	if err := preflight(ctx, cfg); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("DATA_DIR: %w", err)
	}
	// DATA_DIR holds the Fernet key, the ZK keys, the database and the chain:
	// the service's user alone may enter it, whatever its mode was.
	if fi, err := os.Stat(cfg.DataDir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		logger.Warn("DATA_DIR was open to other users; its mode is now 0700", "mode", fi.Mode().Perm().String())
		if err := os.Chmod(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("DATA_DIR: %w", err)
		}
	}
	for _, w := range startupWarnings(cfg) {
		logger.Warn(w)
	}
	a = &App{Config: cfg, logger: logger}
	opened := a // the error returns below set a to nil
	defer func() {
		if err != nil {
			opened.Close()
		}
	}()
	if cfg.Role == RoleFederated {
		if err := a.openFederatedRole(ctx, cfg, logger); err != nil {
			return nil, err
		}
		return a, nil
	}
	if a.Keyring, err = LoadKeyring(cfg, logger); err != nil {
		return nil, err
	}
	if a.DB, err = OpenStore(ctx, cfg); err != nil {
		return nil, err
	}
	a.closers = append(a.closers, a.DB)
	logger.Info("database ready", "database", redactDSN(cfg.DSN()), "dialect", a.DB.Dialect())
	if err := a.openObservability(ctx, cfg); err != nil {
		return nil, err
	}
	if err := a.openAccess(ctx, logger); err != nil {
		return nil, err
	}
	if a.ZK, a.Ledger, err = openProofs(ctx, cfg, a.DB, logger); err != nil {
		return nil, err
	}
	a.closers = append(a.closers, a.Ledger)
	if err := a.serveChainRPC(cfg, logger); err != nil {
		return nil, err
	}
	if a.Pharmacy, err = openPharmacy(ctx, cfg, a.Ledger, logger); err != nil {
		return nil, err
	}
	if a.Issuers, a.Trust, err = openIssuers(cfg, a.DB, a.Ledger); err != nil {
		return nil, err
	}
	// Build the fast prover's tables before serving. The -v2 circuits
	// (8k and 10k constraints) make gnark's fallback prover several times
	// slower than the fixed-base one, and on a busy machine a first proof
	// racing the table build against the 5 s deadline timed out; a start
	// that waits a few CPU-seconds longer never does.
	select {
	case <-a.ZK.Warm():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	timeout := proofTimeout
	if cfg.ProofTimeout > 0 {
		timeout = cfg.ProofTimeout
	}
	prover, err := zkp.NewProver(a.ZK, zkp.WithTimeout(timeout))
	if err != nil {
		return nil, err
	}
	attOpts := []attest.Option{attest.WithTrust(a.Trust)}
	if mode, _, _ := a.Ledger.Anchor(); mode == chain.AnchorBatch {
		attOpts = append(attOpts, attest.WithBatchAnchoring())
	}
	attestor, err := attest.New(observedProver{prover, a.observer}, observedLedger{a.Ledger, a.observer}, attOpts...)
	if err != nil {
		return nil, err
	}
	if err := a.openWebhooks(ctx, cfg, logger); err != nil {
		return nil, err
	}
	// Envelopes are opened under ENVELOPE_TTL; what the service seals
	// itself (answers, results, secrets) is read without an age limit.
	if a.Service, err = healthagents.New(a.Keyring.WithEnvelopeTTL(cfg.EnvelopeTTL), healthagents.WithLogger(logger), healthagents.WithAttestor(attestor),
		healthagents.WithEvents(a.Webhooks), healthagents.WithTracerProvider(a.tracerProvider)); err != nil {
		return nil, err
	}
	if a.IPFS, err = openIPFS(ctx, cfg, logger); err != nil {
		return nil, err
	}
	if a.V1, err = openV1(ctx, a.Service, a.DB, a.Webhooks, a.IPFS, logger, store.WithKeySealer(a.Keyring), a.v1Options()...); err != nil {
		return nil, err
	}
	if a.Audit, err = openAudit(a.DB, store.WithKeySealer(a.Keyring)); err != nil {
		return nil, err
	}
	deps := server.Deps{
		Audit:    a.Audit,
		Service:  a.Service,
		Chain:    a.Ledger,
		Checks:   append(append([]server.Check{{Name: "database", Ping: a.DB.Ping}, {Name: "chain", Ping: a.Ledger.Ping}}, a.redisCheck(cfg.RedisURL)...), ipfsCheck(a.IPFS)...),
		Keys:     a.Keys,
		Limiter:  a.Limiter,
		Webhooks: a.Webhooks,
		V1:       a.V1,
		Issuers:  a.Issuers,
		Trust:    a.Trust,
		ZKSetup:  a.ZKSetup(),
	}
	// Idempotency-Key answers in the database: a retry after a restart or
	// on another replica replays the first answer. Expired ones are pruned
	// at each start.
	idem, err := store.NewIdempotencyStore(a.DB, a.Keyring)
	if err != nil {
		return nil, err
	}
	if _, err := idem.PruneIdempotency(ctx); err != nil {
		logger.Warn("expired idempotency answers not pruned", "err", err)
	}
	deps.Idempotency = idem
	fed, err := a.openFederated(ctx, logger)
	if err != nil {
		return nil, err
	}
	deps.Federated, deps.FederatedAPI = fed.API, fed.API
	if err := a.Metrics.Register(newFederatedCollector(fed.API.Coordinator)); err != nil {
		return nil, err
	}
	if a.Handler, err = server.New(deps, a.serverOptions(cfg, logger)...); err != nil {
		return nil, err
	}
	return a, nil
}

// serverOptions are the HTTP server's options from the settings.
func (a *App) serverOptions(cfg Config, logger *slog.Logger) []server.Option {
	opts := []server.Option{server.WithLogger(logger), server.WithProduction(cfg.Production)}
	if len(cfg.TrustedProxies) > 0 {
		opts = append(opts, server.WithTrustedProxies(cfg.TrustedProxies...))
	}
	if len(cfg.CORSOrigins) > 0 {
		opts = append(opts, server.WithCORSOrigins(cfg.CORSOrigins...))
	}
	if cfg.MaxInFlight > 0 {
		opts = append(opts, server.WithMaxInFlight(cfg.MaxInFlight))
	}
	if cfg.AdmissionQueue != nil || cfg.AdmissionWait > 0 {
		opts = append(opts, server.WithAdmissionQueue(admissionQueue(cfg), cfg.AdmissionWait))
	}
	opts = append(opts, server.WithMetrics(a.Metrics))
	if a.tracerProvider != nil {
		opts = append(opts, server.WithTracerProvider(a.tracerProvider))
	}
	return opts
}

// openObservability builds the metrics registry (with the database pool's
// statistics), the OTLP tracer provider when OTEL_EXPORTER_OTLP_ENDPOINT is
// set, and the service's instruments.
func (a *App) openObservability(ctx context.Context, cfg Config) (err error) {
	if a.Metrics, err = newMetricsRegistry(a.DB); err != nil {
		return err
	}
	tp, err := newTracerProvider(ctx, cfg)
	if err != nil {
		return err
	}
	if tp != nil {
		a.tracerProvider = tp
		a.closers = append(a.closers, closerFunc(func() error {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return tp.Shutdown(sctx) // flushes the spans still queued
		}))
	}
	a.observer, err = newObserver(a.Metrics, a.tracerProvider)
	return err
}

// admissionQueue is the queue depth for server.WithAdmissionQueue:
// ADMISSION_QUEUE, or the server's default (8 per slot) when only
// ADMISSION_WAIT is set.
func admissionQueue(cfg Config) int {
	if cfg.AdmissionQueue != nil {
		return *cfg.AdmissionQueue
	}
	n := cfg.MaxInFlight
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return server.AdmissionQueuePerSlot * n
}

// openWebhooks builds the webhook registry and starts its dispatcher.
// Events reach only the endpoints of the requester's owner. Outside
// production, http:// and loopback endpoint URLs are accepted (private,
// link-local and metadata addresses never are); Open warns of it.
func (a *App) openWebhooks(ctx context.Context, cfg Config, logger *slog.Logger) error {
	// The pseudonym key (shared with the audit log) is kept sealed with
	// the Fernet keyring; one kept in clear by an earlier version is
	// sealed on first use.
	st, err := store.NewWebhookStore(a.DB, store.WithKeySealer(a.Keyring))
	if err != nil {
		return err
	}
	// Signing secrets are stored sealed with the Fernet keyring.
	opts := []webhook.Option{webhook.WithLogger(logger), webhook.WithTenants(), webhook.WithSecretSealer(a.Keyring),
		webhook.WithAttemptObserver(func(result string) { a.observer.deliveries.WithLabelValues(result).Inc() })}
	if err := a.Metrics.Register(newOutboxCollector(st)); err != nil {
		return err
	}
	if !cfg.Production {
		opts = append(opts, webhook.AllowHTTP(), webhook.AllowLoopback())
	}
	if cfg.WebhookLease > 0 {
		opts = append(opts, webhook.WithLease(cfg.WebhookLease))
	}
	if cfg.WebhookTimeout > 0 {
		opts = append(opts, webhook.WithTimeout(cfg.WebhookTimeout))
	}
	if a.Dispatcher, err = webhook.NewDispatcher(st, opts...); err != nil {
		return err
	}
	// A new event wakes this replica's dispatcher; the others poll.
	if a.Webhooks, err = webhook.NewRegistry(st, append(opts, webhook.WithEnqueueHook(a.Dispatcher.Notify))...); err != nil {
		return err
	}
	if err := a.Dispatcher.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	a.closers = append(a.closers, a.Dispatcher)
	return nil
}

// Close releases everything Open acquired, in reverse order.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i].Close())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// openV1 builds the v1 operations over the patient registry and the stored
// prescription validations in db. A validation and its webhook events are
// written in one transaction (events prepared by hooks, the service's sink).
// Patient ids are stored as keyed pseudonyms and results sealed with
// sealer's keyring; rows written before that (migration 0012) are
// rewritten so first.
func openV1(ctx context.Context, svc *healthagents.Service, db *store.DB, hooks *webhook.Registry, node *ipfs.Client, logger *slog.Logger,
	sealer store.KeyOption, opts ...healthagents.V1Option) (*healthagents.V1, error) {
	n, err := store.ProtectAtRest(ctx, db, sealer)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		logger.Info("v1 rows written before pseudonyms were rewritten: patient ids pseudonymized, results sealed", "rows", n)
	}
	ps, err := store.NewPatientStore(db, sealer)
	if err != nil {
		return nil, err
	}
	patients := withIPFS(ps, node, logger) // with IPFS_ENDPOINT, envelopes are pinned there too
	prescriptions, err := store.NewPrescriptionOutbox(db, hooks, sealer)
	if err != nil {
		return nil, err
	}
	controls, err := store.NewX12Controls(db)
	if err != nil {
		return nil, err
	}
	// The X12 route finds a 270's members through the store's keyed index,
	// which registering a patient fills.
	opts = append(opts, healthagents.WithMemberIndex(ps), healthagents.WithX12ControlNumbers(controls))
	return healthagents.NewV1(svc, patients, prescriptions, opts...)
}

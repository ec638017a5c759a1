package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/zkp"
)

// Config holds the runtime settings, read from the environment (the README
// lists them).
type Config struct {
	Host          string     // HOST, default 0.0.0.0
	Port          int        // PORT, default 8000
	LogLevel      slog.Level // LOG_LEVEL, default info
	DatabaseURL   string     // DATABASE_URL; empty = SQLite file under DataDir
	ChainEndpoint string     // CHAIN_ENDPOINT; empty = embedded simulated chain
	ChainKey      string     // CHAIN_PRIVATE_KEY: hex key that signs verification transactions (with CHAIN_ENDPOINT)
	ChainRegistry string     // CHAIN_REGISTRY: GovernedRegistry address (with CHAIN_ENDPOINT; see `healthagents chain deploy`)
	ChainID       uint64     // CHAIN_ID: expected chain id (optional)
	// ChainRPCListen (CHAIN_RPC_LISTEN, e.g. 127.0.0.1:8545): serve the
	// embedded chain's read-only Ethereum JSON-RPC there, so third parties
	// can check a decision without our code. Empty (default): not served.
	ChainRPCListen string
	IPFSEndpoint   string // IPFS_ENDPOINT; optional Kubo RPC address
	FernetKey      string // FERNET_KEY; comma-separated, first encrypts; empty = generated once under DataDir
	DataDir        string // DATA_DIR, default ./data
	AdminToken     string // ADMIN_TOKEN; bearer token allowed to create keys
	RedisURL       string // REDIS_URL; shared rate limits across replicas
	Production     bool   // HEALTHAGENTS_ENV=production
	// Role (HEALTHAGENTS_ROLE) is what the process serves: RoleAll (the
	// default) or RoleFederated, a federated-learning coordinator only
	// (app/lean.go).
	Role        string
	TLSCertFile string   // TLS_CERT_FILE
	TLSKeyFile  string   // TLS_KEY_FILE
	CORSOrigins []string // CORS_ORIGINS, comma-separated; empty = all origins
	// TrustedProxies (TRUSTED_PROXIES, comma-separated addresses or CIDR
	// ranges) are believed about X-Forwarded-For and X-Forwarded-Proto.
	TrustedProxies []string
	// ReplicaURL (REPLICA_URL, e.g. http://10.0.0.5:8000) is this
	// replica's base URL as the other replicas reach it: advertised with
	// the federated leases it holds, so that the others forward the round
	// protocol here. Empty: the others answer those calls with 503.
	ReplicaURL string
	// MaxInFlight (MAX_IN_FLIGHT) is how many heavy requests of each class
	// (proof routes; federated submissions) run at once; 0 = GOMAXPROCS.
	// See server.WithMaxInFlight.
	MaxInFlight int
	// AdmissionQueue (ADMISSION_QUEUE) is how many heavy requests of each
	// class may wait for a slot; nil = 8 per slot, 0 = none (shed at once).
	// AdmissionWait (ADMISSION_WAIT, a Go duration such as 2s) is how long
	// one waits at most; 0 = server.DefaultAdmissionWait (5 s).
	AdmissionQueue *int
	AdmissionWait  time.Duration
	// ProofTimeout bounds one proof, the wait for a prover slot included;
	// 0 = zkp.DefaultTimeout (the spec's 5 s). No setting reads it: a
	// program that embeds the service, or a test on a machine busier than
	// any service would run on, may lengthen it.
	ProofTimeout time.Duration
	// WebhookLease is how long a claimed webhook delivery stays reserved
	// to this process's dispatcher (webhook.WithLease); 0 = the
	// dispatcher's default (its 10 s attempt timeout + 30 s). After a
	// crash, a delivery the dead process had claimed is attempted again
	// once its lease runs out. No setting reads it: a test that kills and
	// restarts a server (cmd/healthagents, HEALTHAGENTS_TEST_WEBHOOK_LEASE)
	// shortens the wait for that retry. Below the attempt timeout +
	// webhook.LeaseMargin + 1 s (the claim's), Open fails.
	WebhookLease time.Duration
	// WebhookTimeout bounds one webhook attempt (webhook.WithTimeout); 0 =
	// the dispatcher's 10 s. No setting reads it: the crash test
	// (HEALTHAGENTS_TEST_WEBHOOK_TIMEOUT) shortens it, its receiver being
	// on loopback, so that its lease can be shorter too.
	WebhookTimeout time.Duration
	// FederatedLease is how long a replica's federated leader lease lasts
	// without renewal (app.WithLeaderLease); 0 = 15 s. No setting reads
	// it: a test that kills the leading replica
	// (HEALTHAGENTS_TEST_FEDERATED_LEASE) shortens the takeover.
	FederatedLease time.Duration
	// ZKTables keeps the fast prover's tables of the keys under
	// DATA_DIR/zkp or ZK_KEYS_DIR between processes (zkp.WithTableStore): a start reads
	// them instead of spending a few CPU-seconds building them. No setting
	// reads it; the test harnesses' processes get the test cache
	// (cmd/healthagents, HEALTHAGENTS_TEST_CACHE). Production ignores it.
	ZKTables zkp.TableStore
	// MaxConnections (MAX_CONNECTIONS) caps open client connections of
	// `healthagents serve`; 0 = 4096.
	MaxConnections int
	// PharmacyOracle (PHARMACY_ORACLE) is the PharmacyOracle address on
	// CHAIN_ENDPOINT (see `healthagents chain deploy`); empty: no oracle,
	// pharmacy confirmations answer "unconfirmed". The embedded chain
	// deploys its own.
	PharmacyOracle string
	// ChainOwner (CHAIN_OWNER, with CHAIN_ENDPOINT) is the registry
	// owner's address, a cold wallet separate from CHAIN_PRIVATE_KEY; start
	// refuses a registry owned by another account. The embedded chain's
	// owner is a key generated under DATA_DIR/chain (owner.key).
	ChainOwner string
	// ChainOwnerKeyFile (CHAIN_OWNER_KEY_FILE, with CHAIN_ENDPOINT) is a
	// file holding the owner's hex key, for a deployment that lets the
	// service send owner actions itself; without it they are printed as
	// unsigned transactions and start refuses until they are mined.
	ChainOwnerKeyFile string
	// ChainConfirmations (CHAIN_CONFIRMATIONS, default 1) is how many
	// blocks (the statement's own included) make a result final on
	// CHAIN_ENDPOINT before it is reported verified.
	ChainConfirmations uint64
	// ChainAnchor (CHAIN_ANCHOR) is how decisions are recorded on chain:
	// "each" (one registry transaction per decision, the registry verifies
	// the proof) or "batch" (the service verifies each proof by eth_call and
	// one transaction records a batch's Merkle root); empty = batch with
	// CHAIN_ENDPOINT, each on the embedded chain
	// (docs/decisions/batch-anchoring.md).
	ChainAnchor string
	// ChainBatchSize (CHAIN_BATCH_SIZE, 1..1024) is the most decisions one
	// batch anchors; 0 = 128.
	ChainBatchSize int
	// ChainBatchWindow (CHAIN_BATCH_WINDOW, a Go duration) is how long a
	// batch collects after its first decision before it is sent if not
	// full (on an idle replica from that decision's proof's start, less
	// the time a batch takes to be mined: chain.WithAnchor); 0 = 200ms.
	ChainBatchWindow time.Duration
	// CoverageTrust (COVERAGE_TRUST): self (default) or registered; see
	// package trust.
	CoverageTrust trust.Mode
	// ZKKeysDir (ZK_KEYS_DIR) holds the proving and verifying keys written
	// by `healthagents ceremony finalize`: loaded (read-only) and checked
	// against the compiled circuits at start. Empty: the single-party
	// development keys under DATA_DIR/zkp (zk_setup "development").
	ZKKeysDir string
	// EnvelopeTTL (ENVELOPE_TTL, a Go duration such as 24h): envelopes
	// whose Fernet token is older are refused (400); 0 = no limit.
	EnvelopeTTL time.Duration

	// allowDevelopmentParts lets tests of production's request rules run
	// on the generated Fernet key, the embedded chain and development ZK
	// keys (export_test.go); the binary cannot set it.
	allowDevelopmentParts bool

	// OTLPEndpoint (OTEL_EXPORTER_OTLP_ENDPOINT) is the base URL of an
	// OTLP/HTTP collector (e.g. http://otel-collector:4318): spans are
	// exported to its /v1/traces. Empty: no spans are exported (an incoming
	// traceparent still reaches the request log).
	OTLPEndpoint string

	// Federated are the FEDERATED_* settings of the training run (DP on or
	// off, epsilon, delta, clip norm, rounds, participants, round timeout);
	// FederatedTask is the task file FEDERATED_TASK names, nil for the
	// built-in diagnosis task. See docs/federated-privacy.md.
	Federated     federated.RunSettings
	FederatedTask *federated.TaskFile
	// FederatedTasks are all the task files FEDERATED_TASK names (a
	// comma-separated list), FederatedTask first: the others run beside
	// it, each with its own rounds and privacy budget.
	FederatedTasks []*federated.TaskFile
}

// developmentWarning is logged at every start outside production: an
// unset HEALTHAGENTS_ENV means development, which the README's quick start
// relies on, and must never go unnoticed on a server others can reach.
const developmentWarning = "DEVELOPMENT MODE (HEALTHAGENTS_ENV is unset or development): " +
	"webhook endpoints may use http:// URLs and resolve to loopback addresses (127.0.0.0/8, ::1), " +
	"sk_dev_ keys are issued and accepted, and a one-time bootstrap admin token is printed when ADMIN_TOKEN is unset. " +
	"Set HEALTHAGENTS_ENV=production on any server others can reach."

// openCORSWarning is logged at a production start without CORS_ORIGINS:
// unset, every origin may call the API with credentials (the compatible
// default), which
// a production deployment should choose, not inherit.
const openCORSWarning = "CORS_ORIGINS is unset: every origin may call the API from a browser, with credentials " +
	"(the spec's default). Set CORS_ORIGINS to the origins of your own web applications."

// startupWarnings are the settings a start should warn about: development
// mode, and in production an open CORS policy.
func startupWarnings(cfg Config) []string {
	var out []string
	if !cfg.Production {
		out = append(out, developmentWarning)
	}
	if cfg.Production && len(cfg.CORSOrigins) == 0 {
		out = append(out, openCORSWarning)
	}
	return out
}

// ConfigFromEnv reads the settings through getenv (os.Getenv in the binary).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Host:           or(getenv("HOST"), "0.0.0.0"),
		Port:           8000,
		LogLevel:       slog.LevelInfo,
		DatabaseURL:    getenv("DATABASE_URL"),
		ChainEndpoint:  getenv("CHAIN_ENDPOINT"),
		ChainKey:       getenv("CHAIN_PRIVATE_KEY"),
		ChainRegistry:  getenv("CHAIN_REGISTRY"),
		ChainRPCListen: getenv("CHAIN_RPC_LISTEN"),
		IPFSEndpoint:   getenv("IPFS_ENDPOINT"),
		FernetKey:      getenv("FERNET_KEY"),
		DataDir:        or(getenv("DATA_DIR"), "data"),
		AdminToken:     getenv("ADMIN_TOKEN"),
		RedisURL:       getenv("REDIS_URL"),
		TLSCertFile:    getenv("TLS_CERT_FILE"),
		TLSKeyFile:     getenv("TLS_KEY_FILE"),
		ZKKeysDir:      getenv("ZK_KEYS_DIR"),
		OTLPEndpoint:   getenv("OTEL_EXPORTER_OTLP_ENDPOINT"),
	}
	if p := getenv("PORT"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return c, fmt.Errorf("PORT must be a port number 0-65535")
		}
		c.Port = n
	}
	if l := getenv("LOG_LEVEL"); l != "" {
		if err := c.LogLevel.UnmarshalText([]byte(strings.ToUpper(l))); err != nil {
			return c, fmt.Errorf("LOG_LEVEL must be debug, info, warn or error")
		}
	}
	switch role := strings.ToLower(getenv("HEALTHAGENTS_ROLE")); role {
	case "", RoleAll:
		c.Role = RoleAll
	case RoleFederated:
		c.Role = RoleFederated
	default:
		return c, fmt.Errorf("HEALTHAGENTS_ROLE must be all or federated")
	}
	prod, err := ProductionEnv(getenv("HEALTHAGENTS_ENV"))
	if err != nil {
		return c, err
	}
	c.Production = prod
	c.CORSOrigins = splitList(getenv("CORS_ORIGINS"))
	c.TrustedProxies = splitList(getenv("TRUSTED_PROXIES"))
	if v := getenv("REPLICA_URL"); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return c, fmt.Errorf("REPLICA_URL must be this replica's base URL as the other replicas reach it (http:// or https://host:port, no credentials or query)")
		}
		c.ReplicaURL = strings.TrimSuffix(v, "/")
	}
	if err := checkDatabaseURL(c.DatabaseURL); err != nil {
		return c, err
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") && !strings.HasPrefix(c.RedisURL, "unix://") {
		return c, fmt.Errorf("REDIS_URL must be redis://, rediss:// or unix:// (scheme %q)", schemeOf(c.RedisURL))
	}
	if c.ChainRPCListen != "" {
		if c.ChainEndpoint != "" {
			return c, fmt.Errorf("CHAIN_RPC_LISTEN serves the embedded chain; with CHAIN_ENDPOINT, third parties query that node")
		}
		if _, _, err := net.SplitHostPort(c.ChainRPCListen); err != nil {
			return c, fmt.Errorf("CHAIN_RPC_LISTEN must be host:port (e.g. 127.0.0.1:8545): %v", err)
		}
	}
	if id := getenv("CHAIN_ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return c, fmt.Errorf("CHAIN_ID must be a positive integer")
		}
		c.ChainID = n
	}
	if v := getenv("PHARMACY_ORACLE"); v != "" {
		if c.ChainEndpoint == "" {
			return c, fmt.Errorf("PHARMACY_ORACLE needs CHAIN_ENDPOINT (the embedded chain deploys its own oracle)")
		}
		if !common.IsHexAddress(v) {
			return c, fmt.Errorf("PHARMACY_ORACLE must be a hex address (0x followed by 40 hex digits)")
		}
		c.PharmacyOracle = v
	}
	c.ChainOwner, c.ChainOwnerKeyFile = getenv("CHAIN_OWNER"), getenv("CHAIN_OWNER_KEY_FILE")
	for name, v := range map[string]string{"CHAIN_OWNER": c.ChainOwner, "CHAIN_OWNER_KEY_FILE": c.ChainOwnerKeyFile} {
		if v != "" && c.ChainEndpoint == "" {
			return c, fmt.Errorf("%s needs CHAIN_ENDPOINT (the embedded chain's owner is a key generated under DATA_DIR/chain)", name)
		}
	}
	if c.ChainOwner != "" && !common.IsHexAddress(c.ChainOwner) {
		return c, fmt.Errorf("CHAIN_OWNER must be a hex address (0x followed by 40 hex digits)")
	}
	c.ChainConfirmations = 1
	if v := getenv("CHAIN_CONFIRMATIONS"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("CHAIN_CONFIRMATIONS must be an integer 1-1000")
		}
		c.ChainConfirmations = n
	}
	c.ChainAnchor = getenv("CHAIN_ANCHOR")
	if v := getenv("CHAIN_BATCH_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > chain.MaxBatch {
			return c, fmt.Errorf("CHAIN_BATCH_SIZE must be an integer 1-%d", chain.MaxBatch)
		}
		c.ChainBatchSize = n
	}
	if v := getenv("CHAIN_BATCH_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > maxBatchWindow {
			return c, fmt.Errorf("CHAIN_BATCH_WINDOW must be a Go duration above 0 and at most %s (such as 200ms)", maxBatchWindow)
		}
		c.ChainBatchWindow = d
	}
	if _, _, _, err := c.anchor(); err != nil {
		return c, err
	}
	if getenv("CHAIN_REPLACE_VERIFIERS") != "" {
		return c, fmt.Errorf("CHAIN_REPLACE_VERIFIERS is gone: verifiers are immutable per circuit id (see docs/decisions/governance.md)")
	}
	if getenv("CHAIN_LEGACY_REGISTRY") != "" {
		return c, fmt.Errorf("CHAIN_LEGACY_REGISTRY is gone: the first circuits' StatementRegistry is no longer read or written, " +
			"every statement is recorded in the GovernedRegistry (CHAIN_REGISTRY); unset it (see docs/decisions.md)")
	}
	mode, err := trust.ParseMode(getenv("COVERAGE_TRUST"))
	if err != nil {
		return c, err
	}
	c.CoverageTrust = mode
	if v := getenv("MAX_IN_FLIGHT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 4096 {
			return c, fmt.Errorf("MAX_IN_FLIGHT must be an integer 1-4096")
		}
		c.MaxInFlight = n
	}
	if v := getenv("ADMISSION_QUEUE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1<<16 {
			return c, fmt.Errorf("ADMISSION_QUEUE must be an integer 0-65536 (0: shed at once when every slot is busy)")
		}
		c.AdmissionQueue = &n
	}
	if v := getenv("ADMISSION_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Minute {
			return c, fmt.Errorf("ADMISSION_WAIT must be a duration above 0 and at most 1m (e.g. 2s, 500ms)")
		}
		c.AdmissionWait = d
	}
	if v := getenv("MAX_CONNECTIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<20 {
			return c, fmt.Errorf("MAX_CONNECTIONS must be an integer 1-1048576")
		}
		c.MaxConnections = n
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return c, fmt.Errorf("TLS_CERT_FILE and TLS_KEY_FILE must be set together")
	}
	if err := c.readAtRest(getenv); err != nil {
		return c, err
	}
	if err := c.readFederated(getenv); err != nil {
		return c, err
	}
	return c, c.validate()
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// splitList splits a comma-separated setting, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// checkDatabaseURL refuses a DATABASE_URL that names a database this
// service cannot use: PostgreSQL (postgres:// or postgresql://) and a SQLite
// file path are the two it speaks. Anything else with a scheme (mysql://, a
// typo such as postgress://) would otherwise become a SQLite file named
// after the URL, password included. The error names the scheme only.
func checkDatabaseURL(u string) error {
	if u == "" || strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		return nil
	}
	if strings.Contains(u, "://") {
		return fmt.Errorf("DATABASE_URL: unsupported scheme %q: use postgres://user@host/db for PostgreSQL, or a file path for SQLite", schemeOf(u))
	}
	return nil
}

// schemeOf is the part of u before "://" (or before ":"), never the rest,
// which may hold a password.
func schemeOf(u string) string {
	if i := strings.Index(u, ":"); i >= 0 {
		u = u[:i]
	}
	if len(u) > 20 {
		u = u[:20]
	}
	return u
}

// maxBatchWindow bounds CHAIN_BATCH_WINDOW: a decision waits for its batch
// at most this long before the batch is sent.
const maxBatchWindow = time.Hour

// anchor is the anchoring the chain settings ask for, defaults applied
// (docs/decisions/batch-anchoring.md): CHAIN_ANCHOR empty means batch with
// CHAIN_ENDPOINT and each on the embedded chain; a value out of range
// refuses naming its setting.
func (c Config) anchor() (chain.AnchorMode, int, time.Duration, error) {
	mode := chain.AnchorMode(c.ChainAnchor)
	switch {
	case mode == "" && c.ChainEndpoint != "":
		mode = chain.AnchorBatch
	case mode == "":
		mode = chain.AnchorEach
	case mode != chain.AnchorEach && mode != chain.AnchorBatch:
		return "", 0, 0, fmt.Errorf("CHAIN_ANCHOR must be each or batch, not %q", c.ChainAnchor)
	}
	size, window := c.ChainBatchSize, c.ChainBatchWindow
	if size == 0 {
		size = chain.DefaultBatchSize
	}
	if window == 0 {
		window = chain.DefaultBatchWindow
	}
	if size < 1 || size > chain.MaxBatch {
		return "", 0, 0, fmt.Errorf("CHAIN_BATCH_SIZE must be an integer 1-%d, not %d", chain.MaxBatch, size)
	}
	if window < 0 || window > maxBatchWindow {
		return "", 0, 0, fmt.Errorf("CHAIN_BATCH_WINDOW must be a Go duration above 0 and at most %s, not %s", maxBatchWindow, window)
	}
	return mode, size, window, nil
}

// ProductionEnv reads a value of HEALTHAGENTS_ENV: true for production
// (or prod), false for development, dev or unset; any other value is an
// error naming the setting. ConfigFromEnv reads it so, and so does any
// subcommand that decides on it without opening the service's settings.
func ProductionEnv(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "development", "dev":
		return false, nil
	case "production", "prod":
		return true, nil
	}
	return false, fmt.Errorf("HEALTHAGENTS_ENV must be development or production")
}

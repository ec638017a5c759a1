package app

// Setting is one environment variable the service or one of its
// subcommands reads. Settings is the one list of them: it drives the start
// check (CheckEnviron: a variable with one of SettingPrefixes that is not
// listed refuses the start), `healthagents serve -h` (SettingsUsage) and
// the settings table of docs/decisions.md (SettingsMarkdown; a test keeps
// the page equal to it). A new setting is a new row here; the tests refuse
// a variable read anywhere (ConfigFromEnv or a getenv in cmd/healthagents)
// that has no row, and a row nothing reads.
type Setting struct {
	Name    string   // FEDERATED_EPSILON
	Default string   // what unset means (markdown)
	Usage   string   // one plain line for `serve -h`
	Doc     string   // the docs' meaning column (markdown); empty: Usage
	Read    []string // who reads it: ReadService and/or subcommands ("chain deploy")
}

// ReadService marks a setting read by ConfigFromEnv: `serve` and every
// subcommand that opens the service's settings (bench, keys, chain, seal,
// participant).
const ReadService = "service"

// SettingPrefixes are the name prefixes that are ours: a variable starting
// with one of them that is not a setting refuses the start (CheckEnviron).
func SettingPrefixes() []string {
	return []string{"HEALTHAGENTS_", "FEDERATED_", "CHAIN_", "ZK_", "COVERAGE_", "WEBHOOK_", "REDIS_", "IPFS_",
		"ADMISSION_", "ENVELOPE_", "FERNET_", "PHARMACY_", "TLS_", "CORS_", "TRUSTED_", "REPLICA_", "DATABASE_", "ADMIN_"}
}

// Settings is every setting, in the order the docs list them.
func Settings() []Setting {
	svc := []string{ReadService}
	return []Setting{
		{Name: "HOST", Default: "0.0.0.0", Usage: "listen address", Read: svc},
		{Name: "PORT", Default: "8000", Usage: "listen port", Read: svc},
		{Name: "LOG_LEVEL", Default: "info", Usage: "debug, info, warn or error (JSON logs on stderr)", Read: svc},
		{Name: "DATA_DIR", Default: "./data", Usage: "where the embedded defaults keep their files", Read: []string{ReadService, "chain deploy"}},
		{Name: "FERNET_KEY", Default: "generated once into DATA_DIR/fernet.key (mode 0600) with a loud log line",
			Usage: "comma-separated Fernet keys: the first encrypts, all decrypt", Read: svc},
		{Name: "DATABASE_URL", Default: "SQLite file under DATA_DIR", Usage: "postgres://… for PostgreSQL, or a SQLite file path",
			Doc: "`postgres://…` for PostgreSQL, or a SQLite file path; another scheme is refused", Read: svc},
		{Name: "CHAIN_ENDPOINT", Default: "embedded chain, kept under DATA_DIR/chain", Usage: "any Ethereum JSON-RPC endpoint",
			Read: []string{ReadService, "chain"}},
		{Name: "CHAIN_PRIVATE_KEY", Default: "none (with CHAIN_ENDPOINT: required)", Usage: "hex key that signs verification transactions and pays their gas",
			Read: []string{ReadService, "chain"}},
		{Name: "CHAIN_REGISTRY", Default: "none (with CHAIN_ENDPOINT: required)", Usage: "GovernedRegistry address printed by `healthagents chain deploy`",
			Read: []string{ReadService, "chain"}},
		{Name: "CHAIN_OWNER", Default: "embedded chain: a key generated under DATA_DIR/chain/owner.key",
			Usage: "with CHAIN_ENDPOINT: the registry owner's address (a cold wallet); start refuses a registry owned by another account",
			Doc:   "with CHAIN_ENDPOINT: the registry owner's address (a cold wallet, never CHAIN_PRIVATE_KEY's); start refuses a registry owned by another account ([governance.md](decisions/governance.md))",
			Read:  []string{ReadService, "chain"}},
		{Name: "CHAIN_OWNER_KEY_FILE", Default: "none (owner actions printed unsigned)",
			Usage: "with CHAIN_ENDPOINT: a file holding the owner's hex key, so the service sends owner actions itself (development, tests)", Read: svc},
		{Name: "CHAIN_CONFIRMATIONS", Default: "1", Usage: "with CHAIN_ENDPOINT: blocks (the statement's own included) before a result is reported verified",
			Doc: "with CHAIN_ENDPOINT: blocks (the statement's own included) before a result is reported verified; the receipt is read again then", Read: svc},
		{Name: "CHAIN_ANCHOR", Default: "batch with CHAIN_ENDPOINT; each on the embedded chain",
			Usage: "each (one registry transaction per decision) or batch (many decisions' Merkle root in one transaction)",
			Doc:   "`each`: one registry transaction per decision, the registry verifies its proof; `batch`: the service verifies each proof by `eth_call` to the circuit's verifier and checks the issuer, then one `recordBatch` transaction records the Merkle root of up to CHAIN_BATCH_SIZE decisions, each answered (with its path, `statement.batch`) once that transaction is mined and confirmed; start refuses `batch` against a registry that predates `recordBatch` ([batch-anchoring.md](decisions/batch-anchoring.md))",
			Read:  svc},
		{Name: "CHAIN_BATCH_SIZE", Default: "128", Usage: "with CHAIN_ANCHOR=batch: the most decisions one batch anchors (1-1024)",
			Doc: "with CHAIN_ANCHOR=batch: the most decisions one batch anchors, 1-1024; a full batch is sent at once", Read: svc},
		{Name: "CHAIN_BATCH_WINDOW", Default: "200ms", Usage: "with CHAIN_ANCHOR=batch: how long a batch collects after its first decision; on an idle replica a decision is answered about this long after its proof began, proof and batch transaction included (a Go duration, at most 1h)",
			Doc: "with CHAIN_ANCHOR=batch: how long a batch collects after its first decision before it is sent unfilled (a Go duration above 0, at most 1h); on an idle replica (no batch in flight or collecting, and no other decision in progress, from the first decision's start until it is answered) it runs from that decision's proof's start, less the time recent batches took to be mined, so a decision is answered about this long after its proof began, its proof and its batch's transaction included; one batch is in flight per replica, the next collects meanwhile ([batch-anchoring.md](decisions/batch-anchoring.md#what-the-window-bounds))", Read: svc},
		{Name: "COVERAGE_TRUST", Default: "self", Usage: "self (the service's own issuer key signs coverage) or registered (only payers registered on chain)",
			Doc:  "`self`: coverage without a credential is signed by the service's own issuer key, DATA_DIR/issuer.key, and decisions say `\"issuer\": \"self\"`; `registered`: only credentials of payers registered on chain, and the start refuses development ZK keys (needs ZK_KEYS_DIR) ([governance.md](decisions/governance.md))",
			Read: svc},
		{Name: "CHAIN_ID", Default: "none", Usage: "the chain id CHAIN_ENDPOINT must serve", Read: svc},
		{Name: "CHAIN_RPC_LISTEN", Default: "none (not served)", Usage: "host:port where the embedded chain's read-only JSON-RPC is served (e.g. 127.0.0.1:8545)",
			Doc:  "host:port where the embedded chain's read-only Ethereum JSON-RPC is served for third parties (e.g. `127.0.0.1:8545`); reading methods only, no account or sending method; refused with CHAIN_ENDPOINT",
			Read: svc},
		{Name: "CHAIN_REPLACE_VERIFIERS", Default: "gone: any value refuses the start", Usage: "gone: verifiers are immutable per circuit id",
			Doc: "verifiers are immutable per circuit id ([governance.md](decisions/governance.md))", Read: svc},
		{Name: "CHAIN_LEGACY_REGISTRY", Default: "gone: any value refuses the start", Usage: "gone: every statement is recorded in the GovernedRegistry (CHAIN_REGISTRY)",
			Doc: "the first circuits' StatementRegistry is no longer read or written; every statement is recorded in the GovernedRegistry (CHAIN_REGISTRY) ([decisions.md](#the-first-circuits-statementregistry-is-gone))", Read: svc},
		{Name: "PHARMACY_ORACLE", Default: "none (embedded chain: deployed at start)", Usage: "PharmacyOracle address on CHAIN_ENDPOINT printed by `healthagents chain deploy`",
			Doc:  "PharmacyOracle address on CHAIN_ENDPOINT printed by `healthagents chain deploy`; unset: no oracle, pharmacy confirmations are `unconfirmed` and attestations 503 ([v1.md](decisions/v1.md#pharmacy-oracle))",
			Read: svc},
		{Name: "IPFS_ENDPOINT", Default: "none (envelopes are kept in the database only)", Usage: "Kubo RPC address (http://127.0.0.1:5001 or /ip4/127.0.0.1/tcp/5001): envelopes are added and pinned there",
			Doc:  "Kubo RPC address, `http://127.0.0.1:5001` or `/ip4/127.0.0.1/tcp/5001` (credentials in the URL go as basic auth): every registered envelope's ciphertext is added, compared and pinned there, DELETE unpins, `/health` reports the node ([v1.md](decisions/v1.md#ipfs-ipfs_endpoint))",
			Read: svc},
		{Name: "ADMIN_TOKEN", Default: "none (a one-time bootstrap token is printed at first start)", Usage: "bearer token allowed to create keys", Read: svc},
		{Name: "REDIS_URL", Default: "none (limits per process)", Usage: "redis://, rediss:// or unix:// URL: shared rate limits across replicas", Read: svc},
		{Name: "HEALTHAGENTS_ENV", Default: "development", Usage: "development or production (HTTPS-only live keys, no dev keys, no development parts)",
			Doc:  "`production` enforces HTTPS-only live keys, refuses dev keys, and refuses to start on development parts: a generated Fernet key, the embedded or a development chain, development ZK keys, plain HTTP without TRUSTED_PROXIES, no ADMIN_TOKEN and no key ([operations.md](decisions/operations.md))",
			Read: svc},
		{Name: "HEALTHAGENTS_ROLE", Default: "all", Usage: "all, or federated: a federated-learning coordinator only (no chain, no decision circuits, no generated Fernet key)",
			Doc:  "`federated`: a federated-learning coordinator only — the database, API keys and limits and the federated tasks; no chain is opened or embedded, no decision circuit set up, no Fernet key generated (FERNET_KEY, or one an earlier start kept under DATA_DIR, still opens `/submit-federated-update`'s records); the clinical routes answer 503 ([federated-hospital.md](decisions/federated-hospital.md#a-lean-coordinator))",
			Read: svc},
		{Name: "TLS_CERT_FILE", Default: "none", Usage: "certificate file: serve HTTPS (with TLS_KEY_FILE)", Read: svc},
		{Name: "TLS_KEY_FILE", Default: "none", Usage: "key file: serve HTTPS (with TLS_CERT_FILE)", Read: svc},
		{Name: "CORS_ORIGINS", Default: "all origins", Usage: "comma-separated allowed origins", Read: svc},
		{Name: "TRUSTED_PROXIES", Default: "none (the TCP peer is the client)", Usage: "comma-separated addresses or CIDR ranges of proxies believed about X-Forwarded-For and X-Forwarded-Proto",
			Doc:  "comma-separated addresses or CIDR ranges of proxies in front of the service: only from them are X-Forwarded-For (client address for limits, allow-lists and the audit log) and X-Forwarded-Proto (HTTPS for live keys and HSTS) believed",
			Read: svc},
		{Name: "REPLICA_URL", Default: "none", Usage: "this replica's base URL as the other replicas reach it (http://api-a:8000)",
			Doc:  "this replica's base URL as the other replicas reach it (`http://api-a:8000`): advertised with the federated leases it holds, so that the other replicas forward the round protocol (rounds, keys, shares, gradients, reveals, `/submit-federated-update`, and their `/tasks/{task}/` forms) to it; unset, they answer those calls 503 and a load balancer's retry must find the coordinating replica ([replicas.md](decisions/replicas.md)). Put the replicas' addresses in TRUSTED_PROXIES so that the coordinating replica sees the client's address",
			Read: svc},
		{Name: "MAX_IN_FLIGHT", Default: "GOMAXPROCS", Usage: "proof requests, and separately federated requests, that run at once",
			Doc: "proof requests, and separately federated requests, run at once; the queue (ADMISSION_QUEUE) waits, the rest get 503 (decisions/server.md)", Read: svc},
		{Name: "ADMISSION_QUEUE", Default: "8 × MAX_IN_FLIGHT", Usage: "heavy requests of each class that may wait for a slot; 0: shed at once",
			Doc: "heavy requests of each class that may wait for a slot; 0: shed at once when every slot is busy (decisions/server.md)", Read: svc},
		{Name: "ADMISSION_WAIT", Default: "5s", Usage: "longest wait in the admission queue (a Go duration, at most 1m) before 503 with Retry-After", Read: svc},
		{Name: "MAX_CONNECTIONS", Default: "4096", Usage: "client connections `healthagents serve` holds open",
			Doc: "client connections `healthagents serve` holds open; at the cap the one idle longest is closed for a newcomer, who waits only while all are busy (decisions/server.md)", Read: svc},
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Default: "none (no spans exported; an incoming traceparent still reaches the request log)",
			Usage: "base URL of an OTLP/HTTP collector (http://otel-collector:4318): spans are exported to its /v1/traces",
			Doc:   "base URL of an OTLP/HTTP collector, e.g. `http://otel-collector:4318`: spans (one per request, named by route template, with open, decide, prove, chain and store under it) are exported to its `/v1/traces`; OTEL_EXPORTER_OTLP_HEADERS is read by the exporter ([operations.md](decisions/operations.md#tracing))",
			Read:  svc},
		{Name: "ZK_KEYS_DIR", Default: "none: single-party development keys under DATA_DIR/zkp (`/status` says `\"zk_setup\": \"development\"`)",
			Usage: "directory written by `healthagents ceremony finalize`: the ceremony's keys, checked at start",
			Doc:   "directory written by `healthagents ceremony finalize`: the proving and verifying keys of a multi-party ceremony, loaded read-only and checked against the compiled circuits (constraint-system hashes, key shape, a sample proof) and `ceremony.json`; any mismatch, or a registered verifier holding another key, refuses the start naming ZK_KEYS_DIR; `zk_setup` is then `ceremony` ([ceremony.md](ceremony.md))",
			Read:  []string{ReadService, "chain deploy"}},
		{Name: "ENVELOPE_TTL", Default: "none (no age limit)", Usage: "a Go duration (at least 1s): envelopes sealed longer ago are refused",
			Doc:  "a Go duration (at least 1s): an envelope whose Fernet token was made longer ago is refused, 400 `<prefix>: Envelope expired: encrypted_data was sealed more than <ttl> ago`; it applies to registered v1 envelopes too when they are opened, so re-register with a fresh one ([at-rest.md](decisions/at-rest.md))",
			Read: svc},
		{Name: "FEDERATED_TASK", Default: "none (the built-in diagnosis task)", Usage: "path(s) of the federated task file(s), comma-separated",
			Doc:  "path of the federated task file (JSON: id, features with column, mean and scale, label and its values, model logistic_regression or softmax, learning_rate, local_epochs, held_out, missing: refuse, mean or zero for an empty CSV cell), or a comma-separated list; read and checked at start, an error names the field ([federated.md](decisions/federated.md))",
			Read: svc},
		{Name: "FEDERATED_DP", Default: "on", Usage: "on, off or distributed: differential privacy of the released models",
			Doc:  "on, off or distributed: differential privacy of the released models, with the noise added by the coordinator (on) or by each participant before masking (distributed: the coordinator never sees an un-noised sum; not with FEDERATED_PROOFS=on); off must be a deliberate choice",
			Read: svc},
		{Name: "FEDERATED_EPSILON", Default: "0.1", Usage: "ε of the whole run, in (0, 100]",
			Doc: "ε of the whole run (0, 100]; start refuses one that cannot be met over FEDERATED_ROUNDS", Read: svc},
		{Name: "FEDERATED_DELTA", Default: "1e-5", Usage: "δ of the whole run, in (0, 1)", Read: svc},
		{Name: "FEDERATED_CLIP_NORM", Default: "1", Usage: "L2 bound of each hospital's update (the DP sensitivity)", Read: svc},
		{Name: "FEDERATED_ROUNDS", Default: "100", Usage: "rounds of the run (the budget is spread over them)", Read: svc},
		{Name: "FEDERATED_MIN_PARTICIPANTS", Default: "3", Usage: "fewest hospitals a round closes with (at least 3)", Read: svc},
		{Name: "FEDERATED_TARGET_PARTICIPANTS", Default: "the minimum", Usage: "key advertisement closes as soon as this many joined", Read: svc},
		{Name: "FEDERATED_ROUND_TIMEOUT", Default: "30m", Usage: "Go duration (1s to 168h) a round may take; each of its four phases gets a quarter", Read: svc},
		{Name: "FEDERATED_PROOFS", Default: "off", Usage: "on: proved rounds, every masked update carries a Groth16 proof that it is within the clip bound",
			Doc:  "on: proved rounds — every masked update carries a Groth16 proof that it is within the clip bound and its evaluation counts within the cohort, checked before it joins the sum; keys set up once per shape and kept under DATA_DIR/federated-proofs, served to participants at GET /api/v1/federated/proof-keys/{shape}",
			Read: svc},
		{Name: "HEALTHAGENTS_URL", Default: "none", Usage: "the service's base URL, the default of `--server`", Read: []string{"x12 270", "model export"}},
		{Name: "HEALTHAGENTS_API_KEY", Default: "none", Usage: "an API key, the default of `--api-key`", Read: []string{"participant", "x12 270", "model export"}},
	}
}

// settingNames is the set of the settings' names.
func settingNames() map[string]bool {
	out := map[string]bool{}
	for _, s := range Settings() {
		out[s.Name] = true
	}
	return out
}

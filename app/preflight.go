package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
)

// Strict settings. Every setting is checked before Open creates or prints
// anything (DATA_DIR, the Fernet key, the ZK keys, the database, the chain,
// a bootstrap token, a log line): a mistake costs one line naming the
// variable, never a half-initialised data directory. ConfigFromEnv checks
// the form of each value (validate); Open then checks what needs the
// outside world (preflight): files, Redis, the chain node, and, under
// HEALTHAGENTS_ENV=production, the development parts it refuses.

// validate checks the form of the settings, with no I/O. Values that may
// be secret (keys, URLs with credentials) are never echoed.
func (c Config) validate() error {
	if err := checkHost(c.Host); err != nil {
		return err
	}
	if c.ChainEndpoint != "" {
		if err := checkChainEndpoint(c.ChainEndpoint); err != nil {
			return err
		}
	}
	if c.ChainKey != "" {
		if _, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(c.ChainKey), "0x")); err != nil {
			return errors.New("CHAIN_PRIVATE_KEY must be a hex secp256k1 private key (64 hex digits, 0x optional)")
		}
	}
	if c.ChainRegistry != "" && !common.IsHexAddress(c.ChainRegistry) {
		return errors.New("CHAIN_REGISTRY must be a hex address (0x followed by 40 hex digits)")
	}
	if c.FernetKey != "" {
		if _, err := cipher.ParseKeyring(c.FernetKey); err != nil {
			return errors.New("FERNET_KEY must be comma-separated Fernet keys (32 bytes each, URL-safe base64)")
		}
	}
	if c.AdminToken != "" && len(c.AdminToken) < apikey.MinAdminTokenLength {
		return fmt.Errorf("ADMIN_TOKEN must be at least %d characters", apikey.MinAdminTokenLength)
	}
	if _, err := apikey.ParseAllowList(c.TrustedProxies); err != nil {
		return fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	if c.OTLPEndpoint != "" {
		if err := checkOTLPEndpoint(c.OTLPEndpoint); err != nil {
			return err
		}
	}
	if c.AdmissionQueue != nil && *c.AdmissionQueue < 0 {
		return errors.New("ADMISSION_QUEUE must not be negative")
	}
	return nil
}

// checkHost accepts an IP address or a DNS name: HOST is where the service
// listens, never a URL or host:port.
func checkHost(h string) error {
	if h == "" || net.ParseIP(h) != nil {
		return nil
	}
	bad := len(h) > 253
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			bad = true
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				bad = true
			}
		}
	}
	if bad {
		return fmt.Errorf("HOST must be an IP address or a host name to listen on (got %.64q; the port is PORT)", h)
	}
	return nil
}

// checkChainEndpoint accepts what go-ethereum's RPC client dials: an
// http(s):// or ws(s):// URL, or an IPC socket path.
func checkChainEndpoint(e string) error {
	if filepath.IsAbs(e) {
		return nil
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" {
		return fmt.Errorf("CHAIN_ENDPOINT must be an http(s):// or ws(s):// URL or an IPC socket path (scheme %q)", schemeOf(e))
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
		return nil
	}
	return fmt.Errorf("CHAIN_ENDPOINT must be an http(s):// or ws(s):// URL or an IPC socket path (scheme %q)", schemeOf(e))
}

// developmentParts is what HEALTHAGENTS_ENV=production refuses, each with
// what to set instead; empty outside production. It needs no I/O beyond
// checking whether the SQLite file exists.
func (c Config) developmentParts() []string {
	if !c.Production {
		return nil
	}
	var out []string
	if c.Role == RoleFederated {
		// A coordinator only: no Fernet key is generated, no chain or
		// decision circuit is opened (lean.go).
		return c.transportDevelopmentParts()
	}
	if c.FernetKey == "" && !c.allowDevelopmentParts {
		out = append(out, "a generated Fernet key (set FERNET_KEY to your own key from a secret store)")
	}
	if c.ChainEndpoint == "" && !c.allowDevelopmentParts {
		out = append(out, "the embedded development chain (set CHAIN_ENDPOINT, CHAIN_PRIVATE_KEY and CHAIN_REGISTRY; deploy with `healthagents chain deploy`)")
	}
	if c.ChainEndpoint != "" && c.ChainID == 0 {
		out = append(out, "no CHAIN_ID (set CHAIN_ID to the id of the network CHAIN_ENDPOINT serves, e.g. 1 for Ethereum mainnet; start checks the node against it)")
	}
	if c.ChainOwnerKeyFile != "" {
		out = append(out, "CHAIN_OWNER_KEY_FILE (the registry owner's key does not belong on the server: unset it, keep CHAIN_OWNER a cold wallet's address and sign the printed owner actions offline)")
	}
	if c.ChainID != 0 && chain.NetworkName(c.ChainID) == "dev" {
		out = append(out, fmt.Sprintf("a development chain id %d (set CHAIN_ENDPOINT to a real network's node)", c.ChainID))
	}
	if c.ZKKeysDir == "" && !c.allowDevelopmentParts {
		out = append(out, "development ZK keys (set ZK_KEYS_DIR to a ceremony's keys; see `healthagents ceremony` and docs/ceremony.md)")
	}
	return append(out, c.transportDevelopmentParts()...)
}

// transportDevelopmentParts are the development parts of any role: how the
// service is reached.
func (c Config) transportDevelopmentParts() []string {
	var out []string
	if c.TLSCertFile == "" && len(c.TrustedProxies) == 0 {
		out = append(out, "plain HTTP (set TLS_CERT_FILE and TLS_KEY_FILE, or TRUSTED_PROXIES naming the proxy that terminates TLS)")
	}
	if c.AdminToken == "" && c.sqliteMissing() {
		out = append(out, noFirstKey)
	}
	return out
}

// noFirstKey is the refusal of a production start with no key and no
// ADMIN_TOKEN: production prints no bootstrap token, so no key could ever
// be created.
const noFirstKey = "no way to create a first key (set ADMIN_TOKEN, or create one with `healthagents keys create` before the first start)"

// sqliteMissing reports whether the database is a SQLite file that does not
// exist yet (so it holds no key).
func (c Config) sqliteMissing() bool {
	if strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return false
	}
	_, err := os.Stat(c.DSN())
	return errors.Is(err, fs.ErrNotExist)
}

// productionRefusal is the one-line error of a production start on
// development parts, or nil.
func productionRefusal(parts []string) error {
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("HEALTHAGENTS_ENV=production refuses to start with %s", strings.Join(parts, "; and "))
}

// preflight checks, before anything is created, what the settings name
// outside the process: the form of every value, the TLS pair, the owner
// key file, ZK_KEYS_DIR, the production refusals, Redis and the chain node.
func preflight(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.ChainEndpoint != "" && (cfg.ChainKey == "" || cfg.ChainRegistry == "") {
		return errors.New("CHAIN_ENDPOINT needs CHAIN_PRIVATE_KEY and CHAIN_REGISTRY (deploy with `healthagents chain deploy`)")
	}
	if cfg.TLSCertFile != "" {
		if _, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			return fmt.Errorf("TLS_CERT_FILE, TLS_KEY_FILE: not a readable certificate and key pair: %w", err)
		}
	}
	if cfg.ChainOwnerKeyFile != "" {
		if _, err := readOwnerKey(cfg.ChainOwnerKeyFile); err != nil {
			return err
		}
	}
	if cfg.ZKKeysDir != "" {
		if fi, err := os.Stat(cfg.ZKKeysDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("ZK_KEYS_DIR %s: not a readable directory (write it with `healthagents ceremony finalize`)", cfg.ZKKeysDir)
		}
	}
	if err := productionRefusal(cfg.developmentParts()); err != nil {
		return err
	}
	if err := checkRedis(ctx, cfg.RedisURL); err != nil {
		return err
	}
	return checkChainNode(ctx, cfg)
}

// checkChainNode asks CHAIN_ENDPOINT for its chain id within 5 s: an
// unreachable node refuses the start naming the variable, and production
// refuses a development chain (geth --dev, Anvil, Hardhat, Ganache: chain
// ids 1337 and 31337), and a node serving another chain than CHAIN_ID
// (required in production) is refused in every mode. The endpoint itself, which may hold a provider's API
// key, is never echoed.
func checkChainNode(ctx context.Context, cfg Config) error {
	if cfg.ChainEndpoint == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := ethclient.DialContext(ctx, cfg.ChainEndpoint)
	if err != nil {
		return fmt.Errorf("CHAIN_ENDPOINT: cannot dial the node: %s", strings.ReplaceAll(err.Error(), cfg.ChainEndpoint, "(CHAIN_ENDPOINT)"))
	}
	defer c.Close()
	id, err := c.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("CHAIN_ENDPOINT: the node does not answer eth_chainId: %s", strings.ReplaceAll(err.Error(), cfg.ChainEndpoint, "(CHAIN_ENDPOINT)"))
	}
	if cfg.Production && chain.NetworkName(id.Uint64()) == "dev" {
		return productionRefusal([]string{fmt.Sprintf("a development chain (CHAIN_ENDPOINT serves chain id %s; set CHAIN_ENDPOINT to a real network's node)", id)})
	}
	if cfg.ChainID != 0 && id.Uint64() != cfg.ChainID {
		return fmt.Errorf("CHAIN_ID=%d but CHAIN_ENDPOINT serves chain id %s: point CHAIN_ENDPOINT at the network you mean, or correct CHAIN_ID", cfg.ChainID, id)
	}
	return nil
}

package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/internal/testcache"
)

// What a test harness asks of the processes it starts. These variables are
// under app.TestPrefix (the start check lets them through, the settings
// table does not list them: no deployment sets them), and a production
// start (HEALTHAGENTS_ENV=production) ignores them.
const (
	// testCacheEnv is the test cache's directory (testcache.DirEnv): the
	// fast prover's tables of the keys under DATA_DIR/zkp are read from
	// it, checked against the keys (zkp.WithTableStore), instead of
	// being built at every start of every test's server.
	testCacheEnv = testcache.DirEnv
	// testProofTimeoutEnv lengthens the proof deadline (a Go duration):
	// a test checks a proof's answer, not its speed, and the machine
	// running the suite may be busier than any service's.
	testProofTimeoutEnv = app.TestPrefix + "PROOF_TIMEOUT"
	// testWebhookLeaseEnv shortens the webhook deliveries' lease (a Go
	// duration, app.Config.WebhookLease): a test that kills a server
	// mid-delivery and restarts it waits that long for the delivery the
	// dead process held to be attempted again.
	testWebhookLeaseEnv = app.TestPrefix + "WEBHOOK_LEASE"
	// testWebhookTimeoutEnv shortens a webhook attempt's timeout (a Go
	// duration, app.Config.WebhookTimeout), so that the lease, which
	// must cover an attempt, can be shorter too.
	testWebhookTimeoutEnv = app.TestPrefix + "WEBHOOK_TIMEOUT"
	// testFederatedLeaseEnv shortens the federated leader lease (a Go
	// duration, app.Config.FederatedLease): a test that kills the leading
	// replica waits that long for another to take over.
	testFederatedLeaseEnv = app.TestPrefix + "FEDERATED_LEASE"
)

// harnessVariables are the variables harnessed reads.
var harnessVariables = []string{testCacheEnv, testProofTimeoutEnv, testWebhookLeaseEnv, testWebhookTimeoutEnv, testFederatedLeaseEnv}

// harnessed applies harnessVariables to cfg.
func harnessed(cfg *app.Config, getenv func(string) string, logger *slog.Logger) error {
	given := false
	for _, v := range harnessVariables {
		given = given || getenv(v) != ""
	}
	if !given {
		return nil
	}
	dir := getenv(testCacheEnv)
	if cfg.Production {
		logger.Warn("test harness variables ignored in production", "vars", harnessVariables)
		return nil
	}
	if dir != "" {
		c, err := testcache.OpenDir(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", testCacheEnv, err)
		}
		cfg.ZKTables = c
		logger.Debug("prover tables from the test cache", "dir", dir)
	}
	for _, d := range []struct {
		env string
		to  *time.Duration
	}{
		{testProofTimeoutEnv, &cfg.ProofTimeout},
		{testWebhookLeaseEnv, &cfg.WebhookLease},
		{testWebhookTimeoutEnv, &cfg.WebhookTimeout},
		{testFederatedLeaseEnv, &cfg.FederatedLease},
	} {
		v := getenv(d.env)
		if v == "" {
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil || dur <= 0 {
			return fmt.Errorf("%s: %q is not a positive Go duration", d.env, v)
		}
		*d.to = dur
	}
	return nil
}

// harnessedKnownKeys is what testCacheEnv gives `healthagents participant`:
// the test cache as its normproof.KnownKeys, so that the proving key it
// fetches, when it is one the test harness set up itself
// (internal/testcache/normkeys), is found decoded there instead of
// decompressed and checked point by point (a few CPU-seconds per
// participant start); any other key is decoded with every check. Nil
// without the variable, or with HEALTHAGENTS_ENV=production, which
// ignores it as serve does.
func harnessedKnownKeys(getenv func(string) string, logger *slog.Logger) (normproof.KnownKeys, error) {
	dir := getenv(testCacheEnv)
	if dir == "" {
		return nil, nil
	}
	prod, err := app.ProductionEnv(getenv("HEALTHAGENTS_ENV"))
	if err != nil {
		return nil, err
	}
	if prod {
		logger.Warn("test harness variables ignored in production", "vars", []string{testCacheEnv})
		return nil, nil
	}
	c, err := testcache.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", testCacheEnv, err)
	}
	return c, nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/store"
)

// benchClasses are the rate-limit classes of the bench's root-family
// targets (submit-federated-update makes its own organization keys).
var benchClasses = map[string]ratelimit.Class{
	"health":                ratelimit.ClassHealth,
	"status":                ratelimit.ClassStatus,
	"verify-eligibility":    ratelimit.ClassEligibility,
	"validate-prescription": ratelimit.ClassPrescription,
}

// benchKeyCount is how many keys a run of n requests per endpoint needs so
// that no endpoint figure refuses it: each key may send an endpoint's
// per-minute figure at once (a token bucket starts full), so the run is
// spread over ceil(n / figure) keys for the tightest endpoint selected
// (docs/decisions/first-hour.md). At least one.
func benchKeyCount(policy ratelimit.Policy, endpoints []string, n int) int {
	k := 1
	for _, e := range endpoints {
		c, ok := benchClasses[e]
		if !ok {
			continue
		}
		if fig := policy.Endpoint[c]; fig > 0 {
			k = max(k, (n+fig-1)/fig)
		}
	}
	return k
}

// benchKeyTTL bounds a bench key's life: a run killed before its cleanup
// leaves nothing usable for long.
const benchKeyTTL = time.Hour

// benchKeys creates the run's keys, on the enterprise tier (no per-minute
// tier figure, no daily quota) and expiring after benchKeyTTL: over HTTP
// with adminToken (POST /auth/keys, for a server elsewhere) or else offline
// on the server's database (cfg: DATABASE_URL or DATA_DIR), as `healthagents
// keys create` does. done revokes what it can of them.
func benchKeys(ctx context.Context, cfg app.Config, client *http.Client, base, adminToken string, count int) (keys []string, done func(), err error) {
	expires := time.Now().Add(benchKeyTTL)
	if adminToken != "" {
		for range count {
			b, _ := json.Marshal(map[string]any{"tier": "enterprise", "name": "bench", "expires_at": expires.UTC().Format(time.RFC3339)})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/auth/keys", bytes.NewReader(b))
			if err != nil {
				return nil, nil, err
			}
			req.Header.Set("Authorization", "Bearer "+adminToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return nil, nil, fmt.Errorf("bench: creating a key: %w", err)
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			var created struct {
				APIKey string `json:"api_key"`
				Detail string `json:"detail"`
			}
			_ = json.Unmarshal(body, &created)
			if resp.StatusCode != http.StatusOK || created.APIKey == "" {
				return nil, nil, fmt.Errorf("bench: creating a key with -admin-token: %d %s", resp.StatusCode, created.Detail)
			}
			keys = append(keys, created.APIKey)
		}
		return keys, func() {}, nil // they expire within benchKeyTTL
	}
	db, err := app.OpenStore(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: creating its keys on the server's database (or pass -key or -admin-token): %w", err)
	}
	ks, err := store.NewKeyStore(db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	svc, err := apikey.New(ks)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	closeAll := func() {
		_ = svc.Close(context.WithoutCancel(ctx))
		db.Close()
	}
	var ids []string
	for range count {
		raw, k, err := svc.Create(ctx, apikey.CreateParams{
			Tier: apikey.Enterprise, Name: "bench", ExpiresAt: expires, CreatedBy: apikey.ByCLI,
			Env: benchEnv(cfg),
		})
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("bench: creating a key: %w", err)
		}
		keys, ids = append(keys, raw), append(ids, k.ID)
	}
	return keys, func() {
		for _, id := range ids {
			_ = svc.Revoke(context.WithoutCancel(ctx), id)
		}
		closeAll()
	}, nil
}

// benchEnv is the key environment a server with cfg accepts.
func benchEnv(cfg app.Config) apikey.Env {
	if cfg.Production {
		return apikey.Live
	}
	return apikey.Dev
}

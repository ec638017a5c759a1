package webhook_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// BenchmarkEmit measures the outbox write an API request waits for: the
// pseudonym, the payload and one INSERT … SELECT fanning out to 3 endpoints.
func BenchmarkEmit(b *testing.B) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			_, reg, _ := benchEnv(b, be, 3)
			ev := eligibilityEvent("PT-000123")
			b.ReportAllocs()
			for b.Loop() {
				if err := reg.Emit(b.Context(), ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDeliver measures end-to-end delivery throughput from the outbox
// to a local receiver: claim, sign, POST, record. One op is one delivery.
// At most two deliveries per endpoint are in flight (the default cap), so
// one endpoint uses 2 of the 16 slots and eight endpoints all of them.
func BenchmarkDeliver(b *testing.B) {
	for _, be := range storetest.Backends(b) {
		for _, endpoints := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/endpoints=%d", be.Name, endpoints), func(b *testing.B) {
				_, reg, disp := benchEnv(b, be, endpoints)
				ev := eligibilityEvent("PT-000123")
				for range (b.N + endpoints - 1) / endpoints {
					if err := reg.Emit(b.Context(), ev); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				done := 0
				for done < b.N {
					n, err := disp.RunOnce(b.Context())
					if err != nil {
						b.Fatal(err)
					}
					done += n
				}
				b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "deliveries/s")
			})
		}
	}
}

// benchEnv opens a fresh database of be's kind for each run of the
// benchmark (the runs with b.N = 1 and then the real N must not share
// endpoints or rows).
func benchEnv(b *testing.B, be storetest.Backend, endpoints int) (*store.WebhookStore, *webhook.Registry, *webhook.Dispatcher) {
	b.Helper()
	fresh := storetest.Backend{Name: be.Name, DSN: storetest.SQLiteDSN(b)}
	if storetest.IsPostgres(be.DSN) {
		fresh.DSN = storetest.PostgresDSN(b)
	}
	db := storetest.Open(b, fresh)
	st, err := store.NewWebhookStore(db)
	if err != nil {
		b.Fatal(err)
	}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	b.Cleanup(rc.Close)
	opts := []webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithConcurrency(16)}
	reg, err := webhook.NewRegistry(st, opts...)
	if err != nil {
		b.Fatal(err)
	}
	for range endpoints {
		if _, err := reg.Create(b.Context(), owner, webhook.CreateRequest{URL: rc.URL, Events: webhook.Events()}); err != nil {
			b.Fatal(err)
		}
	}
	disp, err := webhook.NewDispatcher(st, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { disp.Close() })
	return st, reg, disp
}

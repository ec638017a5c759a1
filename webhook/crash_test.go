package webhook_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// TestKilledProcessDeliversAfterRestart kills (SIGKILL) a process that has
// emitted three events and is in the middle of delivering the first, then
// delivers from a fresh process state over the same database: every event
// arrives, the interrupted one with the webhook-id it had before the crash.
func TestKilledProcessDeliversAfterRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a process")
	}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			var (
				mu    sync.Mutex
				got   []received
				first = make(chan string, 1)
			)
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				n := len(got)
				got = append(got, received{Header: r.Header.Clone(), Body: body})
				mu.Unlock()
				if n == 0 {
					first <- r.Header.Get("webhook-id")
					<-r.Context().Done() // hang until the sender dies
					return
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(rc.Close)

			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
			cmd.Env = append(os.Environ(), "WEBHOOK_CRASH_DSN="+b.DSN, "WEBHOOK_CRASH_URL="+rc.URL)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			secret := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if s, ok := strings.CutPrefix(sc.Text(), "SECRET "); ok {
						secret <- s
					}
				}
			}()
			var interrupted string
			select {
			case interrupted = <-first:
			case <-time.After(30 * time.Second):
				t.Fatal("the child never delivered")
			}
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			sec := <-secret

			// The restarted side: a new pool, a new dispatcher, later than
			// the dead one's lease.
			db := storetest.Open(t, b)
			st, err := store.NewWebhookStore(db)
			require.NoError(t, err)
			later := time.Now().Add(10 * time.Minute)
			disp, err := webhook.NewDispatcher(st, webhook.AllowHTTP(), webhook.AllowLoopback(),
				webhook.WithClock(func() time.Time { return later }))
			require.NoError(t, err)
			n, err := disp.RunOnce(t.Context())
			require.NoError(t, err)
			assert.Equal(t, 3, n)

			mu.Lock()
			defer mu.Unlock()
			ids := map[string]int{}
			for _, r := range got {
				assert.True(t, verifyStandardWebhooks(sec, r.Header, r.Body))
				ids[r.Header.Get("webhook-id")]++
			}
			assert.Len(t, ids, 3, "three events")
			assert.Equal(t, 2, ids[interrupted], "the interrupted event again, same webhook-id")
		})
	}
}

// TestCrashChild is the process TestKilledProcessDeliversAfterRestart kills.
func TestCrashChild(t *testing.T) {
	dsn, url := os.Getenv("WEBHOOK_CRASH_DSN"), os.Getenv("WEBHOOK_CRASH_URL")
	if dsn == "" {
		t.Skip("started by TestKilledProcessDeliversAfterRestart")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	require.NoError(t, err)
	st, err := store.NewWebhookStore(db)
	require.NoError(t, err)
	opts := []webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithConcurrency(1)}
	reg, err := webhook.NewRegistry(st, opts...)
	require.NoError(t, err)
	ep, err := reg.Create(ctx, owner, webhook.CreateRequest{URL: url, Events: webhook.Events()})
	require.NoError(t, err)
	fmt.Println("SECRET", ep.Secret)
	for i := range 3 {
		require.NoError(t, reg.Emit(ctx, eligibilityEvent(fmt.Sprint("PT-", i))))
	}
	disp, err := webhook.NewDispatcher(st, opts...)
	require.NoError(t, err)
	_, _ = disp.RunOnce(ctx) // hangs on the first delivery until killed
	select {}
}

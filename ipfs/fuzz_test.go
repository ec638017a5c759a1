package ipfs_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/healthagents/healthagents/ipfs"
)

// FuzzResponses serves arbitrary bodies and statuses as every RPC answer:
// the client never panics, and every failure is an *ipfs.Error.
func FuzzResponses(f *testing.F) {
	f.Add(200, []byte(`{"Version":"0.38.0"}`))
	f.Add(200, []byte(`{"Name":"x","Hash":"bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4","Size":"12"}`))
	f.Add(200, []byte(`{"Pins":["bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"]}`))
	f.Add(500, []byte(`{"Message":"not pinned or pinned indirectly","Code":0,"Type":"error"}`))
	f.Add(200, []byte("{\"Hash\":\"\x00\"}\n{"))
	f.Add(404, []byte("404 page not found"))
	var (
		mu     sync.Mutex
		body   []byte
		status int
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		st, b := status, body
		mu.Unlock()
		w.WriteHeader(st)
		_, _ = w.Write(b)
	}))
	defer ts.Close()
	c, err := ipfs.New(ts.URL)
	if err != nil {
		f.Fatal(err)
	}
	data := []byte("hello world\n")
	want := cidOfF(f, data)
	f.Fuzz(func(t *testing.T, st int, b []byte) {
		if st < 200 || st > 599 {
			st = 200
		}
		mu.Lock()
		status, body = st, b // one input at a time per process
		mu.Unlock()
		ctx := context.Background()
		for _, err := range []error{c.Ping(ctx), c.Put(ctx, data, want), c.Pin(ctx, want), c.Unpin(ctx, want)} {
			var e *ipfs.Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("not an *ipfs.Error: %v", err)
			}
		}
		if _, err := c.Cat(ctx, want, len(data)); err != nil {
			var e *ipfs.Error
			if !errors.As(err, &e) {
				t.Fatalf("not an *ipfs.Error: %v", err)
			}
		}
	})
}

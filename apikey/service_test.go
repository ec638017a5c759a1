package apikey_test

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var (
	home  = netip.MustParseAddr("203.0.113.7")
	other = netip.MustParseAddr("198.51.100.1")
)

func newService(t *testing.T, db *store.DB, opts ...apikey.Option) *apikey.Service {
	t.Helper()
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	svc, err := apikey.New(ks, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, svc.Close(context.Background())) })
	return svc
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		clk := newClock()
		svc := newService(t, db, apikey.WithClock(clk.Now))

		raw, k, err := svc.Create(ctx, apikey.CreateParams{Tier: apikey.Pro, Organization: "org-1", Name: "billing"})
		require.NoError(t, err)
		assert.Equal(t, apikey.Live, k.Env)
		assert.Equal(t, apikey.DefaultScopes(), sortedCopy(k.Scopes))

		got, err := svc.Authenticate(ctx, raw, home)
		require.NoError(t, err)
		assert.Equal(t, k.ID, got.ID)
		assert.Equal(t, apikey.Pro, got.Tier)
		assert.Equal(t, "org-1", got.Organization)

		t.Run("fail/wrong secret with the same id", func(t *testing.T) {
			tok, err := apikey.Parse(raw)
			require.NoError(t, err)
			first := "Z" // another first character: 1 token in 62 starts with Z already
			if tok.Secret[0] == 'Z' {
				first = "Y"
			}
			fake := tok.Env.Prefix() + tok.ID + "_" + first + tok.Secret[1:]
			fake += apikey.Checksum(fake)
			_, err = svc.Authenticate(ctx, fake, home)
			require.ErrorIs(t, err, apikey.ErrInvalid)
		})
		t.Run("fail/unknown id", func(t *testing.T) {
			other, err := apikey.NewTokenForTest(apikey.Live)
			require.NoError(t, err)
			_, err = svc.Authenticate(ctx, other, home)
			require.ErrorIs(t, err, apikey.ErrInvalid)
		})

		// Rotation: the old key works through the grace, then 401.
		newRaw, nk, err := svc.Rotate(ctx, k.ID)
		require.NoError(t, err)
		assert.NotEqual(t, k.ID, nk.ID)
		assert.Equal(t, k.ID, nk.CreatedBy)
		assert.Equal(t, k.ID, k.Budget())
		assert.Equal(t, k.Budget(), nk.Budget(), "a rotated key keeps its rate-limit budget")
		assert.Equal(t, "org-1", nk.Organization)
		_, _, err = svc.Rotate(ctx, k.ID)
		require.ErrorIs(t, err, apikey.ErrConflict, "one successor per key")

		clk.Add(23*time.Hour + 59*time.Minute)
		_, err = svc.Authenticate(ctx, raw, home)
		require.NoError(t, err, "old key within grace")
		clk.Add(time.Minute)
		_, err = svc.Authenticate(ctx, raw, home)
		require.ErrorIs(t, err, apikey.ErrInvalid, "old key after 24 h")
		_, err = svc.Authenticate(ctx, newRaw, home)
		require.NoError(t, err)

		// Revocation is immediate, cache or not.
		require.NoError(t, svc.Revoke(ctx, nk.ID))
		_, err = svc.Authenticate(ctx, newRaw, home)
		require.ErrorIs(t, err, apikey.ErrInvalid)
		require.NoError(t, svc.Revoke(ctx, nk.ID), "revoking twice is fine")
		require.ErrorIs(t, svc.Revoke(ctx, "ZZZZZZZZZZ"), apikey.ErrNotFound)
		_, _, err = svc.Rotate(ctx, nk.ID)
		require.ErrorIs(t, err, apikey.ErrInvalid, "a revoked key cannot be rotated")

		// Keys survive a restart: a new Service on a reopened database.
		raw3, k3, err := svc.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeEligibility}})
		require.NoError(t, err)
		db2 := storetest.Open(t, b)
		svc2 := newService(t, db2, apikey.WithClock(clk.Now))
		again, err := svc2.Authenticate(ctx, raw3, home)
		require.NoError(t, err)
		assert.Equal(t, k3.ID, again.ID)
		assert.Equal(t, apikey.Dev, again.Env)
		assert.True(t, again.HasScope(apikey.ScopeEligibility))
		assert.False(t, again.HasScope(apikey.ScopePrescription))
		_, err = svc2.Authenticate(ctx, newRaw, home)
		require.ErrorIs(t, err, apikey.ErrInvalid, "revocation survives the restart")
	})
}

func sortedCopy(s []apikey.Scope) []apikey.Scope {
	want := map[apikey.Scope]bool{}
	for _, x := range s {
		want[x] = true
	}
	var out []apikey.Scope
	for _, x := range apikey.DefaultScopes() {
		if want[x] {
			out = append(out, x)
		}
	}
	return out
}

func TestWhitelistAndRestriction(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		svc := newService(t, db)
		raw, k, err := svc.Create(ctx, apikey.CreateParams{})
		require.NoError(t, err)
		ips, err := apikey.ParseAllowList([]string{"203.0.113.7", "10.0.0.0/8", "2001:db8::/32"})
		require.NoError(t, err)
		require.NoError(t, svc.SetWhitelist(ctx, k.ID, ips))

		tests := []struct {
			name string
			addr string
			want error
		}{
			{"ok/exact address", "203.0.113.7", nil},
			{"ok/in cidr", "10.200.3.4", nil},
			{"ok/ipv4-mapped", "::ffff:10.0.0.1", nil},
			{"ok/ipv6 cidr", "2001:db8:5::1", nil},
			{"fail/neighbour", "203.0.113.8", apikey.ErrForbidden},
			{"fail/outside", "198.51.100.1", apikey.ErrForbidden},
			{"fail/ipv6 outside", "2001:db9::1", apikey.ErrForbidden},
		}
		for _, tt := range tests {
			_, err := svc.Authenticate(ctx, raw, netip.MustParseAddr(tt.addr))
			if tt.want == nil {
				assert.NoError(t, err, tt.name)
			} else {
				assert.ErrorIs(t, err, tt.want, tt.name)
			}
		}
		_, err = svc.Authenticate(ctx, raw, netip.Addr{})
		require.ErrorIs(t, err, apikey.ErrForbidden, "unknown address with an allow-list")

		require.NoError(t, svc.SetWhitelist(ctx, k.ID, nil))
		_, err = svc.Authenticate(ctx, raw, other)
		require.NoError(t, err, "an empty list lifts the restriction")
		require.ErrorIs(t, svc.SetWhitelist(ctx, "ZZZZZZZZZZ", nil), apikey.ErrNotFound)

		rawR, _, err := svc.Create(ctx, apikey.CreateParams{Restricted: true})
		require.NoError(t, err)
		_, err = svc.Authenticate(ctx, rawR, home)
		require.ErrorIs(t, err, apikey.ErrForbidden, "restricted account")
	})
}

func TestCacheAcrossInstances(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		clk := newClock()
		a := newService(t, db, apikey.WithClock(clk.Now), apikey.WithCacheTTL(5*time.Second))
		other := newService(t, storetest.Open(t, b), apikey.WithClock(clk.Now))
		raw, k, err := a.Create(ctx, apikey.CreateParams{})
		require.NoError(t, err)
		_, err = a.Authenticate(ctx, raw, home)
		require.NoError(t, err)
		require.NoError(t, other.Revoke(ctx, k.ID)) // another replica revokes
		_, err = a.Authenticate(ctx, raw, home)
		require.NoError(t, err, "served from cache within the TTL")
		clk.Add(5 * time.Second)
		_, err = a.Authenticate(ctx, raw, home)
		require.ErrorIs(t, err, apikey.ErrInvalid, "refetched after the TTL")
	})
}

func TestListPaginates(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		clk := newClock()
		svc := newService(t, db, apikey.WithClock(clk.Now))
		var ids []string
		for i := range 12 {
			org := "a"
			if i%3 == 0 {
				org = "b"
			}
			_, k, err := svc.Create(ctx, apikey.CreateParams{Organization: org})
			require.NoError(t, err)
			ids = append(ids, k.ID)
			clk.Add(time.Second)
		}
		page, total, err := svc.List(ctx, apikey.ListOptions{Offset: 10, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 12, total)
		require.Len(t, page, 2)
		assert.Equal(t, ids[10:], []string{page[0].ID, page[1].ID})
		bs, total, err := svc.List(ctx, apikey.ListOptions{Organization: "b", Limit: 100})
		require.NoError(t, err)
		assert.Equal(t, 4, total)
		assert.Len(t, bs, 4)
		for _, o := range []apikey.ListOptions{{Offset: -1, Limit: 10}, {Limit: 0}, {Limit: 101}} {
			_, _, err := svc.List(ctx, o)
			assert.ErrorIs(t, err, apikey.ErrBadRequest, "%+v", o)
		}
	})
}

func TestUsage(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		clk := newClock()
		svc := newService(t, db, apikey.WithClock(clk.Now), apikey.WithUsageFlushInterval(time.Hour))
		_, k, err := svc.Create(ctx, apikey.CreateParams{})
		require.NoError(t, err)
		_, k2, err := svc.Create(ctx, apikey.CreateParams{})
		require.NoError(t, err)

		// Two hours ago: 50 requests that must fall outside a 1 h window.
		clk.Add(-2 * time.Hour)
		for range 50 {
			svc.RecordUsage(k.ID, 200, 900*time.Millisecond)
		}
		require.NoError(t, svc.Flush(ctx))
		clk.Add(2 * time.Hour)
		// Now: 100 requests, latencies 1..100 ms, every tenth a 5xx.
		for i := 1; i <= 100; i++ {
			status := 200
			if i%10 == 0 {
				status = 503
			}
			svc.RecordUsage(k.ID, status, time.Duration(i)*time.Millisecond)
		}
		svc.RecordUsage(k2.ID, 200, time.Second)

		u, err := svc.Usage(ctx, k.ID, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, int64(100), u.Requests)
		assert.Equal(t, int64(10), u.Errors)
		assert.InEpsilon(t, 50*time.Millisecond, u.P50, 0.07)
		assert.InEpsilon(t, 95*time.Millisecond, u.P95, 0.07)
		assert.InEpsilon(t, 99*time.Millisecond, u.P99, 0.07)

		day, err := svc.Usage(ctx, k.ID, 24*time.Hour)
		require.NoError(t, err)
		assert.Equal(t, int64(150), day.Requests)
		assert.InEpsilon(t, 900*time.Millisecond, day.P99, 0.07)

		_, err = svc.Usage(ctx, k.ID, 0)
		require.ErrorIs(t, err, apikey.ErrBadRequest)
		_, err = svc.Usage(ctx, "ZZZZZZZZZZ", time.Hour)
		require.ErrorIs(t, err, apikey.ErrNotFound)

		// Retention: with 1 h kept, the old 50 requests go.
		short := newService(t, db, apikey.WithClock(clk.Now), apikey.WithUsageRetention(time.Hour))
		require.NoError(t, short.PruneUsage(ctx))
		day, err = svc.Usage(ctx, k.ID, 24*time.Hour)
		require.NoError(t, err)
		assert.Equal(t, int64(100), day.Requests)

		// Usage buffered at Close is written, not lost.
		svc.RecordUsage(k2.ID, 200, time.Second)
		require.NoError(t, svc.Close(ctx))
		fresh := newService(t, db, apikey.WithClock(clk.Now))
		u2, err := fresh.Usage(ctx, k2.ID, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, int64(2), u2.Requests)
	})
}

func TestBootstrap(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		clk := newClock()
		svc := newService(t, db, apikey.WithClock(clk.Now))
		tok1, err := svc.IssueBootstrapToken(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, tok1)
		tok2, err := svc.IssueBootstrapToken(ctx) // a second start, still no key
		require.NoError(t, err)
		require.NotEqual(t, tok1, tok2)

		_, err = svc.AuthorizeAdmin(ctx, tok1[:len(tok1)-1]+flip(tok1[len(tok1)-1]))
		require.ErrorIs(t, err, apikey.ErrInvalid)

		// Two concurrent uses of one token: exactly one wins.
		var wg sync.WaitGroup
		results := make([]error, 4)
		for i := range results {
			wg.Go(func() { _, results[i] = svc.AuthorizeAdmin(ctx, tok2) })
		}
		wg.Wait()
		wins := 0
		for _, err := range results {
			if err == nil {
				wins++
			} else {
				require.ErrorIs(t, err, apikey.ErrInvalid)
			}
		}
		require.Equal(t, 1, wins)
		_, err = svc.AuthorizeAdmin(ctx, tok1)
		require.ErrorIs(t, err, apikey.ErrInvalid, "using one token consumes every outstanding one")

		_, _, err = svc.Create(ctx, apikey.CreateParams{CreatedBy: apikey.ByBootstrap})
		require.NoError(t, err)
		tok3, err := svc.IssueBootstrapToken(ctx)
		require.NoError(t, err)
		assert.Empty(t, tok3, "no bootstrap once a key exists")

		admin := newService(t, db, apikey.WithAdminToken("correct horse battery staple"))
		by, err := admin.AuthorizeAdmin(ctx, "correct horse battery staple")
		require.NoError(t, err)
		assert.Equal(t, apikey.ByAdminToken, by)
		_, err = admin.AuthorizeAdmin(ctx, "correct horse battery stapl")
		require.ErrorIs(t, err, apikey.ErrInvalid)
	})
}

func TestBootstrapTokenExpires(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		clk := newClock()
		svc := newService(t, db, apikey.WithClock(clk.Now))
		tok, err := svc.IssueBootstrapToken(t.Context())
		require.NoError(t, err)
		clk.Add(apikey.BootstrapTTL)
		_, err = svc.AuthorizeAdmin(t.Context(), tok)
		require.ErrorIs(t, err, apikey.ErrInvalid)
	})
}

func TestCanManage(t *testing.T) {
	t.Parallel()
	self := &apikey.Key{ID: "a", Organization: "o1"}
	admin := &apikey.Key{ID: "b", Organization: "o1", Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}}
	root := &apikey.Key{ID: "c", Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}}
	stranger := &apikey.Key{ID: "d", Organization: "o2"}
	assert.True(t, self.CanManage(self))
	assert.False(t, self.CanManage(stranger))
	assert.True(t, admin.CanManage(self))
	assert.False(t, admin.CanManage(stranger))
	assert.True(t, root.CanManage(stranger))
}

package webhook_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

func TestCreateRefusesUnsafeURLs(t *testing.T) {
	t.Parallel()
	res := staticResolver{
		"hooks.example":    {netip.MustParseAddr("93.184.215.14")},
		"inside.example":   {netip.MustParseAddr("127.0.0.1")},
		"mixed.example":    {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.7")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		// A resolver that reads numeric forms as a public address: they
		// are refused whatever a resolver makes of them.
		"2130706433": {netip.MustParseAddr("93.184.215.14")},
		"0177.0.0.1": {netip.MustParseAddr("93.184.215.14")},
		"0x7f.1":     {netip.MustParseAddr("93.184.215.14")},
		"127.1":      {netip.MustParseAddr("93.184.215.14")},
	}
	ev := []string{healthagents.EventEligibilityVerified}
	tests := []struct {
		name, url string
		events    []string
		dev       bool // AllowHTTP + AllowLoopback
		detail    string
	}{
		{"ok/public https", "https://hooks.example/h", ev, false, ""},
		{"ok/dev loopback", "http://127.0.0.1:8080/h", ev, true, ""},
		{"ok/dev loopback name", "http://inside.example/h", ev, true, ""},
		{"fail/loopback v4", "https://127.0.0.1/h", ev, false, "loopback"},
		{"fail/loopback v6", "https://[::1]/h", ev, false, "loopback"},
		{"fail/loopback mapped", "https://[::ffff:127.0.0.1]/h", ev, false, "loopback"},
		{"fail/private 10", "https://10.1.2.3/h", ev, true, "private"},
		{"fail/private 172.16", "https://172.16.0.1/h", ev, true, "private"},
		{"fail/private 192.168", "https://192.168.1.1/h", ev, true, "private"},
		{"fail/unique local", "https://[fd12::1]/h", ev, true, "private"},
		{"fail/metadata v4", "https://169.254.169.254/latest/meta-data", ev, true, "metadata"},
		{"fail/metadata v6", "https://[fd00:ec2::254]/", ev, true, "metadata"},
		{"fail/metadata by name", "https://metadata.example/", ev, true, "metadata"},
		{"fail/link-local", "https://169.254.10.1/", ev, true, "link-local"},
		{"fail/link-local v6", "https://[fe80::1]/", ev, true, "link-local"},
		{"fail/unspecified", "https://0.0.0.0/", ev, true, "unspecified"},
		{"fail/unspecified v6", "https://[::]/", ev, true, "unspecified"},
		{"fail/cgnat", "https://100.64.0.1/", ev, true, "cgnat"},
		{"fail/multicast", "https://224.0.0.1/", ev, true, "multicast"},
		{"fail/nat64 private", "https://[64:ff9b::a00:1]/", ev, true, "private"},
		{"fail/6to4 loopback", "https://[2002:7f00:1::]/", ev, false, "loopback"},
		{"fail/name resolving to loopback", "https://inside.example/h", ev, false, "loopback"},
		{"fail/name with one private address", "https://mixed.example/h", ev, true, "private"},
		{"fail/unresolvable", "https://nowhere.example/", ev, true, "could not be resolved"},
		{"fail/decimal ip", "https://2130706433/h", ev, false, "four decimal numbers"},
		{"fail/octal ip", "https://0177.0.0.1/h", ev, false, "four decimal numbers"},
		{"fail/hex ip", "https://0x7f.1/h", ev, false, "four decimal numbers"},
		{"fail/short ip", "https://127.1/h", ev, false, "four decimal numbers"},
		{"fail/short ip in development", "http://127.1:8080/h", ev, true, "four decimal numbers"},
		{"fail/trailing-dot ip", "https://127.0.0.1./h", ev, true, "four decimal numbers"},
		{"fail/http in production", "http://hooks.example/h", ev, false, "must use https"},
		{"fail/ftp", "ftp://hooks.example/h", ev, true, "must use https"},
		{"fail/relative", "/h", ev, true, "absolute"},
		{"fail/credentials", "https://user:pw@hooks.example/h", ev, false, "credentials"},
		{"fail/empty", "", ev, false, "required"},
		{"fail/too long", "https://hooks.example/" + strings.Repeat("a", 2100), ev, false, "longer"},
		{"fail/unknown event", "https://hooks.example/h", []string{"eligibility.verified", "patient.deleted"}, false, "unknown event 'patient.deleted'"},
		{"fail/no events", "https://hooks.example/h", nil, false, "at least one event"},
	}
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	st, err := store.NewWebhookStore(db)
	require.NoError(t, err)
	prod, err := webhook.NewRegistry(st, webhook.WithResolver(res))
	require.NoError(t, err)
	dev, err := webhook.NewRegistry(st, webhook.WithResolver(res), webhook.AllowHTTP(), webhook.AllowLoopback())
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := prod
			if tt.dev {
				reg = dev
			}
			c, err := reg.Create(t.Context(), "org-ssrf", webhook.CreateRequest{URL: tt.url, Events: tt.events})
			if tt.detail == "" {
				require.NoError(t, err)
				assert.Regexp(t, `^whsec_[A-Za-z0-9+/]{43}=$`, c.Secret)
				assert.Regexp(t, `^ep_[a-z2-7]{16}$`, c.ID)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, webhook.ErrInvalid), "%v", err)
			assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
			assert.Contains(t, healthagents.ErrorDetail(err), tt.detail)
		})
	}
}

func TestEndpointsAreScopedToTheirOwner(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		ctx := t.Context()
		var ids []string
		for i := range 3 {
			c := e.register(t, "http://127.0.0.1:"+itoa(9000+i)+"/", healthagents.EventPrescriptionValidated, healthagents.EventEligibilityVerified)
			assert.Equal(t, []string{healthagents.EventEligibilityVerified, healthagents.EventPrescriptionValidated}, c.Events)
			ids = append(ids, c.ID)
			e.clock.Advance(time.Millisecond)
		}
		page, total, err := e.reg.List(ctx, owner, webhook.ListParams{Offset: 1, Limit: 1})
		require.NoError(t, err)
		assert.Equal(t, 3, total)
		require.Len(t, page, 1)
		assert.Equal(t, ids[1], page[0].ID)

		other, total, err := e.reg.List(ctx, "org-2", webhook.ListParams{Limit: 10})
		require.NoError(t, err)
		assert.Zero(t, total)
		assert.Empty(t, other)
		_, err = e.reg.Get(ctx, "org-2", ids[0])
		assert.ErrorIs(t, err, webhook.ErrNotFound)
		assert.ErrorIs(t, e.reg.Delete(ctx, "org-2", ids[0]), webhook.ErrNotFound)
		_, _, err = e.reg.Attempts(ctx, "org-2", ids[0], webhook.ListParams{Limit: 10})
		assert.ErrorIs(t, err, webhook.ErrNotFound)

		for _, p := range []webhook.ListParams{{Offset: -1, Limit: 10}, {Limit: 0}, {Limit: 101}} {
			_, _, err := e.reg.List(ctx, owner, p)
			assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "%+v", p)
		}

		require.NoError(t, e.reg.Delete(ctx, owner, ids[0]))
		_, err = e.reg.Get(ctx, owner, ids[0])
		assert.Equal(t, healthagents.CodeNotFound, healthagents.ErrorCode(err))
		assert.ErrorIs(t, e.reg.Delete(ctx, owner, ids[0]), webhook.ErrNotFound)
	})
}

func TestWithTenantsRoutesEventsToTheRequestersEndpoints(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithTenants())
		mine, theirs := newReceiver(t), newReceiver(t)
		e.register(t, mine.URL)
		_, err := e.reg.Create(t.Context(), "org-2", webhook.CreateRequest{URL: theirs.URL, Events: webhook.Events()})
		require.NoError(t, err)

		require.NoError(t, e.reg.Emit(t.Context(), ownedEvent(owner, eligibilityEvent("PT-1"))))
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-2")), "an anonymous event goes nowhere")
		assert.Equal(t, 1, e.runOnce(t))
		assert.Len(t, mine.requests(), 1)
		assert.Empty(t, theirs.requests())
	})
}

func TestDeleteDropsPendingDeliveries(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		c := e.register(t, rc.URL)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		require.NoError(t, e.reg.Delete(t.Context(), owner, c.ID))
		assert.Zero(t, e.runOnce(t))
		assert.Empty(t, rc.requests())
	})
}

func TestEmitRefusesUnknownEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}))
	assert.Error(t, e.reg.Emit(t.Context(), healthagents.Event{Type: "patient.deleted"}))
}

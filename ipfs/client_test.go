package ipfs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ipfs"
)

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

func cidOf(t *testing.T, data []byte) cid.Cid {
	t.Helper()
	c, err := cipher.CIDFor(data)
	require.NoError(t, err)
	return c
}

func cidOfF(f *testing.F, data []byte) cid.Cid {
	f.Helper()
	c, err := cipher.CIDFor(data)
	if err != nil {
		f.Fatal(err)
	}
	return c
}

func rawCID(t *testing.T, data []byte, code uint64, length int) cid.Cid {
	t.Helper()
	mh, err := multihash.Sum(data, code, length)
	require.NoError(t, err)
	return cid.NewCidV1(cid.Raw, mh)
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"http://127.0.0.1:5001", "http://127.0.0.1:5001"},
		{"http://127.0.0.1:5001/", "http://127.0.0.1:5001/"},
		{"https://user:secret@ipfs.example:443/api/v0", "https://ipfs.example:443/api/v0"},
		{"/ip4/127.0.0.1/tcp/5001", "http://127.0.0.1:5001"},
		{"/ip6/::1/tcp/5001", "http://[::1]:5001"},
		{"/dns/kubo/tcp/5001/https", "https://kubo:5001"},
	} {
		c, err := ipfs.New(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, c.Endpoint(), tc.in)
		assert.NotContains(t, c.Endpoint(), "secret")
	}
	for _, bad := range []string{"", "127.0.0.1:5001", "ftp://h:1", "http://", "http://h:1/?x=1",
		"/ip4/300.1.1.1/tcp/5001", "/ip4/127.0.0.1/udp/5001", "/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/tcp/5001/ws", "/unix/tmp/api"} {
		_, err := ipfs.New(bad)
		assert.Error(t, err, bad)
	}
	_, err := ipfs.New("http://h:1", ipfs.WithTimeout(0))
	assert.Error(t, err)
	_, err = ipfs.New("http://h:1", ipfs.WithHTTPClient(nil))
	assert.Error(t, err)
}

func TestAddOptionsFor(t *testing.T) {
	t.Parallel()
	data := []byte("hello world\n")
	v0, err := cid.Decode("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
	require.NoError(t, err)
	pb := cid.NewCidV1(cid.DagProtobuf, v0.Hash())
	cbor := cid.NewCidV1(cid.DagCBOR, v0.Hash())
	ident, err := multihash.Sum(data, multihash.IDENTITY, -1)
	require.NoError(t, err)
	short, err := multihash.Sum(data, multihash.SHA2_256, 20)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		c    cid.Cid
		size int
		want []ipfs.AddOptions
	}{
		{"ok/v0", v0, 12, []ipfs.AddOptions{{CIDVersion: 0, Hash: "sha2-256", Chunker: "size-262144"}}},
		{"ok/v1 raw", cidOf(t, data), 12, []ipfs.AddOptions{{CIDVersion: 1, Hash: "sha2-256", RawLeaves: true, Chunker: "size-262144"}}},
		{"ok/v1 raw over a chunk", cidOf(t, data), 300000, []ipfs.AddOptions{{CIDVersion: 1, Hash: "sha2-256", RawLeaves: true, Chunker: "size-300000"}}},
		{"ok/v1 raw blake3", rawCID(t, data, multihash.BLAKE3, 32), 12, []ipfs.AddOptions{{CIDVersion: 1, Hash: "blake3", RawLeaves: true, Chunker: "size-262144"}}},
		{"ok/v1 dag-pb one chunk", pb, 12, []ipfs.AddOptions{{CIDVersion: 1, Hash: "sha2-256", Chunker: "size-262144"}}},
		{"ok/v1 dag-pb", pb, 300000, []ipfs.AddOptions{
			{CIDVersion: 1, Hash: "sha2-256", RawLeaves: true, Chunker: "size-262144"},
			{CIDVersion: 1, Hash: "sha2-256", Chunker: "size-262144"},
		}},
		{"fail/dag-cbor", cbor, 12, nil},
		{"fail/identity", cid.NewCidV1(cid.Raw, ident), 12, nil},
		{"fail/truncated sha2-256", cid.NewCidV1(cid.Raw, short), 12, nil},
		{"fail/raw over 1 MiB", cidOf(t, data), ipfs.MaxRawBlock + 1, nil},
		{"fail/undefined", cid.Undef, 12, nil},
	} {
		got, err := ipfs.AddOptionsFor(tc.c, tc.size)
		if tc.want == nil {
			assert.ErrorIs(t, err, ipfs.ErrUnsupportedCID, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

func TestPut(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 12, ipfs.ChunkSize, ipfs.ChunkSize + 1, 1 << 20} {
		f, c, _ := newFakeKubo(t)
		data := randomBytes(t, size)
		want := cidOf(t, data)
		require.NoError(t, c.Put(t.Context(), data, want), size)
		assert.True(t, f.pinned(want), size)
		// First a hash-only probe, then the pinned add, with kubo's defaults
		// spelled out.
		qs := f.addQueries()
		require.Len(t, qs, 2)
		assert.Equal(t, "true", qs[0].Get("only-hash"))
		assert.Equal(t, "false", qs[0].Get("pin"))
		assert.Equal(t, "false", qs[1].Get("only-hash"))
		assert.Equal(t, "true", qs[1].Get("pin"))
		for _, k := range []string{"cid-version", "raw-leaves", "chunker", "hash", "trickle", "max-file-links", "inline"} {
			assert.NotEmpty(t, qs[1].Get(k), k)
		}

		back, err := c.Cat(t.Context(), want, size)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, back))

		require.NoError(t, c.Unpin(t.Context(), want))
		assert.False(t, f.pinned(want))
		assert.ErrorIs(t, c.Unpin(t.Context(), want), ipfs.ErrNotPinned)
	}
}

func TestPutMismatchWritesNothing(t *testing.T) {
	t.Parallel()
	f, c, _ := newFakeKubo(t)
	data := []byte("the ciphertext")
	err := c.Put(t.Context(), data, cidOf(t, []byte("other bytes")))
	require.ErrorIs(t, err, ipfs.ErrCIDMismatch)
	var e *ipfs.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "add", e.Op)
	assert.NotContains(t, err.Error(), "ciphertext")
	assert.Zero(t, f.stored(), "a mismatched add must only hash")

	// A CID no add can make is refused before any call.
	ident, err := multihash.Sum(data, multihash.IDENTITY, -1)
	require.NoError(t, err)
	require.ErrorIs(t, c.Put(t.Context(), data, cid.NewCidV1(cid.Raw, ident)), ipfs.ErrUnsupportedCID)
	assert.Empty(t, f.addQueries()[1:])
}

func TestNodeDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	c, err := ipfs.New("http://" + addr)
	require.NoError(t, err)
	data := []byte("x")
	assert.ErrorIs(t, c.Ping(t.Context()), ipfs.ErrUnavailable)
	assert.ErrorIs(t, c.Put(t.Context(), data, cidOf(t, data)), ipfs.ErrUnavailable)
	assert.ErrorIs(t, c.Unpin(t.Context(), cidOf(t, data)), ipfs.ErrUnavailable)

	// A node that never answers: the client's own timeout ends the call.
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	c, err = ipfs.New(hang.URL, ipfs.WithTimeout(50*time.Millisecond))
	require.NoError(t, err)
	err = c.Ping(t.Context())
	require.ErrorIs(t, err, ipfs.ErrUnavailable)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestGarbage: answers that are not Kubo's give clear errors, never a panic
// and never an unbounded read.
func TestGarbage(t *testing.T) {
	t.Parallel()
	data := []byte("ciphertext")
	want := cidOf(t, data)
	huge := strings.Repeat("A", ipfs.MaxJSONResponse+10)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		call    func(*ipfs.Client) error
		kind    error
		message string
	}{
		{"version/oversized", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"Version":"` + huge + `"}`)) },
			ping, ipfs.ErrBadResponse, "larger than 64 KiB"},
		{"version/not json", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>hello</html>")) },
			ping, ipfs.ErrBadResponse, "not the JSON Kubo sends"},
		{"version/empty body", func(http.ResponseWriter, *http.Request) {}, ping, ipfs.ErrBadResponse, ""},
		{"version/no field", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) },
			ping, ipfs.ErrBadResponse, "no Version"},
		{"version/wrong type", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"Version":7}`)) },
			ping, ipfs.ErrBadResponse, ""},
		{"status/404 html", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "<h1>nope</h1>", http.StatusNotFound) },
			ping, ipfs.ErrBadResponse, "not a Kubo RPC error body"},
		{"status/502", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) },
			ping, ipfs.ErrUnavailable, ""},
		{"status/huge error", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(huge))
		}, ping, ipfs.ErrBadResponse, "error body larger than 4 KiB"},
		{"status/kubo error", func(w http.ResponseWriter, _ *http.Request) {
			kuboError(w, http.StatusInternalServerError, "bad\x00thing\n"+strings.Repeat("x", 500))
		}, ping, ipfs.ErrAPI, "bad thing"},
		{"add/hash not a cid", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"Hash":"QmNotACid"}`)) },
			put(data, want), ipfs.ErrBadResponse, "Hash is not a CID"},
		{"add/no hash", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"Name":"x"}`)) },
			put(data, want), ipfs.ErrBadResponse, "no Hash"},
		{"add/endless events", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat(`{"Name":"x","Hash":"`+want.String()+`"}`+"\n", 40)))
		}, put(data, want), ipfs.ErrBadResponse, ""},
		{"add/stream error", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Trailer", "X-Stream-Error")
			_, _ = w.Write([]byte(`{"Hash":"` + want.String() + `"}`))
			w.Header().Set("X-Stream-Error", "disk full")
		}, put(data, want), ipfs.ErrAPI, "disk full"},
		{"cat/longer than expected", stage(want, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(huge)) }),
			put(data, want), ipfs.ErrCIDMismatch, "more than 10 bytes"},
		{"cat/other bytes", stage(want, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ciphertexX")) }),
			put(data, want), ipfs.ErrCIDMismatch, "other bytes"},
		{"pin/not listed", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"Pins":[]}`)) },
			func(c *ipfs.Client) error { return c.Pin(context.Background(), want) }, ipfs.ErrBadResponse, "does not list"},
		{"pin/null", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`null`)) },
			func(c *ipfs.Client) error { return c.Pin(context.Background(), want) }, ipfs.ErrBadResponse, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(tc.handler)
			defer ts.Close()
			c, err := ipfs.New(ts.URL)
			require.NoError(t, err)
			err = tc.call(c)
			require.ErrorIs(t, err, tc.kind)
			var e *ipfs.Error
			require.ErrorAs(t, err, &e)
			assert.Contains(t, err.Error(), tc.message)
			assert.LessOrEqual(t, len(err.Error()), 400, "error text stays short")
			assert.NotContains(t, err.Error(), "\x00")
		})
	}
}

func ping(c *ipfs.Client) error { return c.Ping(context.Background()) }

func put(data []byte, want cid.Cid) func(*ipfs.Client) error {
	return func(c *ipfs.Client) error { return c.Put(context.Background(), data, want) }
}

// stage answers add (and pin) correctly for want and cat with the handler.
func stage(want cid.Cid, cat http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v0/add":
			_, _ = w.Write([]byte(`{"Name":"ciphertext","Hash":"` + want.String() + `","Size":"10"}`))
		case "/api/v0/cat":
			cat(w, r)
		default:
			kuboError(w, http.StatusInternalServerError, "unexpected")
		}
	}
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			http.Error(w, "403 - Forbidden", http.StatusForbidden) // as kubo answers
			return
		}
		_, _ = w.Write([]byte(`{"Version":"0.38.0"}`))
	}))
	defer ts.Close()
	c, err := ipfs.New(strings.Replace(ts.URL, "http://", "http://alice:s3cret@", 1))
	require.NoError(t, err)
	v, err := c.Version(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "0.38.0", v)

	c, err = ipfs.New(ts.URL)
	require.NoError(t, err)
	err = c.Ping(t.Context())
	require.ErrorIs(t, err, ipfs.ErrAPI)
	assert.Contains(t, err.Error(), "credentials")
	assert.False(t, errors.Is(err, ipfs.ErrUnavailable))
}

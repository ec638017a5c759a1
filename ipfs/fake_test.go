package ipfs_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ipfs"
)

// fakeKubo speaks the subset of Kubo's RPC API the client uses, for unit
// tests only; kubo_test.go runs the same client against a real node. It
// computes CIDs for what cipher.CIDFor covers (CIDv1, sha2-256, raw leaves,
// balanced 256 KiB chunks) and for single raw blocks of any chunk size, and
// answers Kubo's error body for anything else.
type fakeKubo struct {
	mu    sync.Mutex
	files map[string][]byte // by CID string
	pins  map[string]bool
	adds  []url.Values // the query of every add call
}

func newFakeKubo(t *testing.T, opts ...ipfs.Option) (*fakeKubo, *ipfs.Client, *httptest.Server) {
	t.Helper()
	f := &fakeKubo{files: map[string][]byte{}, pins: map[string]bool{}}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	c, err := ipfs.New(ts.URL, opts...)
	require.NoError(t, err)
	return f, c, ts
}

func kuboError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"Message": msg, "Code": 0, "Type": "error"})
}

func (f *fakeKubo) pinned(c cid.Cid) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pins[c.String()]
}

func (f *fakeKubo) stored() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.files)
}

func (f *fakeKubo) addQueries() []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.adds...)
}

func (f *fakeKubo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "405 - Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch strings.TrimPrefix(r.URL.Path, "/api/v0/") {
	case "version":
		_ = json.NewEncoder(w).Encode(map[string]string{"Version": "0.38.0-fake", "System": "amd64/linux"})
	case "add":
		f.adds = append(f.adds, q)
		file, _, err := r.FormFile("file")
		if err != nil {
			kuboError(w, http.StatusBadRequest, "file argument 'path' is required")
			return
		}
		data, _ := io.ReadAll(file)
		c, err := fakeCID(data, q)
		if err != nil {
			kuboError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if q.Get("only-hash") != "true" {
			f.files[c.String()] = data
			if q.Get("pin") == "true" {
				f.pins[c.String()] = true
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"Name": "ciphertext", "Hash": c.String(), "Size": strconv.Itoa(len(data))})
	case "cat":
		data, ok := f.files[q.Get("arg")]
		if !ok {
			kuboError(w, http.StatusInternalServerError, "block was not found locally (offline): ipld: could not find "+q.Get("arg"))
			return
		}
		if n, err := strconv.Atoi(q.Get("length")); err == nil && n < len(data) {
			data = data[:n]
		}
		_, _ = w.Write(data)
	case "pin/add":
		if _, ok := f.files[q.Get("arg")]; !ok {
			kuboError(w, http.StatusInternalServerError, "pin: block was not found locally (offline)")
			return
		}
		f.pins[q.Get("arg")] = true
		_ = json.NewEncoder(w).Encode(map[string][]string{"Pins": {q.Get("arg")}})
	case "pin/rm":
		if !f.pins[q.Get("arg")] {
			kuboError(w, http.StatusInternalServerError, "not pinned or pinned indirectly")
			return
		}
		delete(f.pins, q.Get("arg"))
		_ = json.NewEncoder(w).Encode(map[string][]string{"Pins": {q.Get("arg")}})
	default:
		http.Error(w, "404 page not found", http.StatusNotFound)
	}
}

func fakeCID(data []byte, q url.Values) (cid.Cid, error) {
	if q.Get("hash") != "sha2-256" || q.Get("cid-version") != "1" || q.Get("raw-leaves") != "true" ||
		q.Get("trickle") != "false" || q.Get("inline") != "false" || q.Get("max-file-links") != "174" {
		return cid.Undef, fmt.Errorf("fake kubo: only CIDv1 sha2-256 raw-leaves balanced DAGs, got %v", q)
	}
	size, err := strconv.Atoi(strings.TrimPrefix(q.Get("chunker"), "size-"))
	if err != nil || size < 1 || size > ipfs.MaxRawBlock {
		return cid.Undef, fmt.Errorf("fake kubo: bad chunker %q", q.Get("chunker"))
	}
	if len(data) <= size {
		sum := sha256.Sum256(data)
		mh, _ := multihash.Encode(sum[:], multihash.SHA2_256)
		return cid.NewCidV1(cid.Raw, mh), nil
	}
	if size != ipfs.ChunkSize {
		return cid.Undef, fmt.Errorf("fake kubo: multi-chunk files only with size-%d", ipfs.ChunkSize)
	}
	return cipher.CIDFor(data)
}

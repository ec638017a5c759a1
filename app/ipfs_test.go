package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	mh "github.com/multiformats/go-multihash"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ipfs"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
)

// pinNode is a stand-in Kubo node for these unit tests (the ipfs package
// tests the client against a real node when HEALTHAGENTS_TEST_IPFS is set,
// and TestIPFSRegistryKubo below runs this file's flow on one). It adds
// files under cipher.CIDFor — what Seal puts in ipfs_cid — or, when lie is
// set, under the CID of other bytes.
type pinNode struct {
	mu    sync.Mutex
	lie   bool
	files map[string][]byte
	pins  map[string]bool
}

func (n *pinNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	arg := r.URL.Query().Get("arg")
	fail := func(msg string) {
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]any{"Message": msg, "Code": 0, "Type": "error"})
	}
	switch r.URL.Path {
	case "/api/v0/version":
		_, _ = w.Write([]byte(`{"Version":"0.38.0-test"}`))
	case "/api/v0/add":
		f, _, err := r.FormFile("file")
		if err != nil {
			fail("no file")
			return
		}
		data, _ := io.ReadAll(f)
		hashed := data
		if n.lie {
			hashed = append([]byte("not "), data...)
		}
		c, _ := cipher.CIDFor(hashed)
		if r.URL.Query().Get("only-hash") != "true" {
			n.files[c.String()] = data
			n.pins[c.String()] = r.URL.Query().Get("pin") == "true"
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"Hash": c.String()})
	case "/api/v0/cat":
		data, ok := n.files[arg]
		if !ok {
			fail("block was not found locally (offline)")
			return
		}
		_, _ = w.Write(data)
	case "/api/v0/pin/rm":
		if !n.pins[arg] {
			fail("not pinned or pinned indirectly")
			return
		}
		n.pins[arg] = false
		_ = json.NewEncoder(w).Encode(map[string][]string{"Pins": {arg}})
	default:
		fail("unexpected " + r.URL.Path)
	}
}

func (n *pinNode) pinned(c string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pins[c]
}

func (n *pinNode) file(c string) []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.files[c]
}

type ipfsEnv struct {
	ring     *cipher.Keyring
	patients *store.PatientStore
	reg      healthagents.PatientRegistry
	v1       *healthagents.V1
	svc      *healthagents.Service
}

func newIPFSEnv(t *testing.T, endpoint string) *ipfsEnv {
	t.Helper()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	ring, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	svc, err := healthagents.New(ring)
	require.NoError(t, err)
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "ipfs.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ps, err := store.NewPatientStore(db)
	require.NoError(t, err)
	rs, err := store.NewPrescriptionStore(db)
	require.NoError(t, err)
	node, err := openIPFS(t.Context(), Config{IPFSEndpoint: endpoint}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	reg := withIPFS(ps, node, slog.New(slog.DiscardHandler))
	v1, err := healthagents.NewV1(svc, reg, rs)
	require.NoError(t, err)
	return &ipfsEnv{ring: ring, patients: ps, reg: reg, v1: v1, svc: svc}
}

func (e *ipfsEnv) seal(t *testing.T, id string) healthagents.PatientData {
	t.Helper()
	b, err := os.ReadFile("../testdata/record.json")
	require.NoError(t, err)
	r, err := record.Parse(b)
	require.NoError(t, err)
	r.PatientID = id
	plain, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(id, plain, e.ring)
	require.NoError(t, err)
	return env
}

func newPinNode(t *testing.T) (*pinNode, string) {
	t.Helper()
	n := &pinNode{files: map[string][]byte{}, pins: map[string]bool{}}
	ts := httptest.NewServer(n)
	t.Cleanup(ts.Close)
	return n, ts.URL
}

func TestWithoutIPFS(t *testing.T) {
	t.Parallel()
	e := newIPFSEnv(t, "")
	assert.IsType(t, &store.PatientStore{}, e.reg, "no IPFS_ENDPOINT: the store itself")
	assert.Empty(t, ipfsCheck(nil))
	_, err := openIPFS(t.Context(), Config{IPFSEndpoint: "ftp://nope"}, slog.New(slog.DiscardHandler))
	assert.ErrorContains(t, err, "IPFS_ENDPOINT")
}

func TestIPFSRegistryPinsAndUnpins(t *testing.T) {
	t.Parallel()
	node, url := newPinNode(t)
	e := newIPFSEnv(t, url)
	ctx := t.Context()

	first := e.seal(t, "PT-IPFS1")
	require.NoError(t, e.v1.PutPatient(ctx, "", first.PatientID, &first))
	assert.True(t, node.pinned(first.IPFSCID))
	assert.Equal(t, first.EncryptedData, string(node.file(first.IPFSCID)), "the ciphertext as received")

	// Replacing the envelope pins the new CID and drops the old pin.
	second := e.seal(t, "PT-IPFS1")
	require.NotEqual(t, first.IPFSCID, second.IPFSCID)
	require.NoError(t, e.v1.PutPatient(ctx, "", second.PatientID, &second))
	assert.True(t, node.pinned(second.IPFSCID))
	assert.False(t, node.pinned(first.IPFSCID))

	require.NoError(t, e.v1.DeletePatient(ctx, "", second.PatientID))
	assert.False(t, node.pinned(second.IPFSCID))
	err := e.v1.DeletePatient(ctx, "", second.PatientID)
	assert.Equal(t, healthagents.CodeNotFound, healthagents.ErrorCode(err))
}

// TestIPFSSharedEnvelopeKeepsItsPin: the same envelope registered by two
// organizations is pinned once; the first one's DELETE leaves the pin for
// the other, the last one's DELETE removes it. A replacement likewise
// unpins the old CID only when no other envelope names it.
func TestIPFSSharedEnvelopeKeepsItsPin(t *testing.T) {
	t.Parallel()
	node, url := newPinNode(t)
	e := newIPFSEnv(t, url)
	ctx := t.Context()

	shared := e.seal(t, "PT-SHARED")
	require.NoError(t, e.v1.PutPatient(ctx, "org:a", shared.PatientID, &shared))
	require.NoError(t, e.v1.PutPatient(ctx, "org:b", shared.PatientID, &shared))
	require.NoError(t, e.v1.DeletePatient(ctx, "org:a", shared.PatientID))
	assert.True(t, node.pinned(shared.IPFSCID), "org:b's envelope still names the CID")

	next := e.seal(t, "PT-SHARED")
	require.NoError(t, e.v1.PutPatient(ctx, "org:c", shared.PatientID, &shared))
	require.NoError(t, e.v1.PutPatient(ctx, "org:b", next.PatientID, &next))
	assert.True(t, node.pinned(shared.IPFSCID), "org:b replaced its envelope, org:c's still names the old CID")
	assert.True(t, node.pinned(next.IPFSCID))

	require.NoError(t, e.v1.DeletePatient(ctx, "org:c", shared.PatientID))
	assert.False(t, node.pinned(shared.IPFSCID), "the last envelope naming it is gone")
	assert.True(t, node.pinned(next.IPFSCID))
}

// TestCIDSpellings: an envelope may name the same content as CIDv0 or as
// CIDv1 (any base); the reference check asks for the written text, the
// base32 v1 form and, for dag-pb over SHA-256, the v0 form.
func TestCIDSpellings(t *testing.T) {
	t.Parallel()
	sum, err := mh.Sum([]byte("ciphertext"), mh.SHA2_256, -1)
	require.NoError(t, err)
	v0 := cid.NewCidV0(sum)
	v1 := cid.NewCidV1(cid.DagProtobuf, sum)
	b58, err := v1.StringOfBase(multibase.Base58BTC)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{v0.String(), v1.String()}, spellings(v0, v0.String()))
	assert.ElementsMatch(t, []string{v0.String(), v1.String()}, spellings(v1, v1.String()))
	assert.ElementsMatch(t, []string{b58, v1.String(), v0.String()}, spellings(v1, b58))
	raw := cid.NewCidV1(cid.Raw, sum)
	assert.ElementsMatch(t, []string{raw.String()}, spellings(raw, raw.String()), "a raw leaf has no v0 form")
}

// TestIPFSRegistryBase64Form: encrypted_data sent as Base64 of the token
// text, with the CID of the token text (both accepted by cipher): the node
// gets the token text.
func TestIPFSRegistryBase64Form(t *testing.T) {
	t.Parallel()
	node, url := newPinNode(t)
	e := newIPFSEnv(t, url)
	env := e.seal(t, "PT-IPFS2")
	token := env.EncryptedData
	env.EncryptedData = base64.StdEncoding.EncodeToString([]byte(token))
	require.NoError(t, e.v1.PutPatient(t.Context(), "", env.PatientID, &env))
	assert.True(t, node.pinned(env.IPFSCID))
	assert.Equal(t, token, string(node.file(env.IPFSCID)))
}

func TestIPFSRegistryMismatch(t *testing.T) {
	t.Parallel()
	node, url := newPinNode(t)
	node.lie = true
	e := newIPFSEnv(t, url)
	env := e.seal(t, "PT-IPFS3")
	err := e.reg.PutPatient(t.Context(), "", env)
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
	assert.Equal(t, "Patient registration failed: ipfs_cid is not the CID the IPFS node computes for encrypted_data", healthagents.ErrorDetail(err))
	assert.ErrorIs(t, err, ipfs.ErrCIDMismatch)
	// Through V1 (what PUT /api/v1/patients answers) it stays a 400, not 503.
	err = e.v1.PutPatient(t.Context(), "", env.PatientID, &env)
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
	assert.Equal(t, "Patient registration failed: ipfs_cid is not the CID the IPFS node computes for encrypted_data", healthagents.ErrorDetail(err))
	_, err = e.patients.Patient(t.Context(), "", env.PatientID)
	assert.ErrorIs(t, err, healthagents.ErrPatientNotFound, "nothing stored")
	node.mu.Lock()
	assert.Empty(t, node.files, "nothing written to the node")
	node.mu.Unlock()
}

func TestIPFSNodeDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	e := newIPFSEnv(t, url)
	env := e.seal(t, "PT-IPFS4")
	err = e.v1.PutPatient(t.Context(), "", env.PatientID, &env)
	assert.Equal(t, healthagents.CodeUnavailable, healthagents.ErrorCode(err))
	assert.Equal(t, "Service temporarily unavailable", healthagents.ErrorDetail(err))
	assert.ErrorIs(t, err, ipfs.ErrUnavailable)
	_, err = e.patients.Patient(t.Context(), "", env.PatientID)
	assert.ErrorIs(t, err, healthagents.ErrPatientNotFound, "nothing stored")

	// Deleting still works: unpinning is best effort.
	require.NoError(t, e.patients.PutPatient(t.Context(), "", env))
	require.NoError(t, e.v1.DeletePatient(t.Context(), "", env.PatientID))

	// /health reports the node.
	node, err := ipfs.New(url)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: e.svc, Checks: ipfsCheck(node)})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.JSONEq(t, `{"detail":"Service temporarily unavailable"}`, string(body))
}

func TestIPFSHealthUp(t *testing.T) {
	t.Parallel()
	_, url := newPinNode(t)
	node, err := ipfs.New(url)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: mustService(t), Checks: ipfsCheck(node)})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func mustService(t *testing.T) *healthagents.Service {
	t.Helper()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	ring, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	svc, err := healthagents.New(ring)
	require.NoError(t, err)
	return svc
}

// TestIPFSRegistryKubo runs the registry against the real Kubo node at
// HEALTHAGENTS_TEST_IPFS.
func TestIPFSRegistryKubo(t *testing.T) {
	url := os.Getenv("HEALTHAGENTS_TEST_IPFS")
	if url == "" {
		t.Skip("HEALTHAGENTS_TEST_IPFS is not set (a Kubo RPC address)")
	}
	e := newIPFSEnv(t, url)
	node, err := ipfs.New(url)
	require.NoError(t, err)
	ctx := context.Background()
	env := e.seal(t, "PT-KUBO1")
	require.NoError(t, e.v1.PutPatient(ctx, "", env.PatientID, &env))
	c := mustCID(t, env.IPFSCID)
	back, err := node.Cat(ctx, c, len(env.EncryptedData))
	require.NoError(t, err)
	assert.Equal(t, env.EncryptedData, string(back))
	require.NoError(t, e.v1.DeletePatient(ctx, "", env.PatientID))
	assert.ErrorIs(t, node.Unpin(ctx, c), ipfs.ErrNotPinned, "DELETE unpinned it")

	b64 := e.seal(t, "PT-KUBO2")
	token := b64.EncryptedData
	b64.EncryptedData = base64.StdEncoding.EncodeToString([]byte(token))
	require.NoError(t, e.v1.PutPatient(ctx, "", b64.PatientID, &b64))
	back, err = node.Cat(ctx, mustCID(t, b64.IPFSCID), len(token))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(back), "gAAAAA"))
	require.NoError(t, e.v1.DeletePatient(ctx, "", b64.PatientID))
}

func mustCID(t *testing.T, s string) cid.Cid {
	t.Helper()
	c, err := cid.Decode(s)
	require.NoError(t, err)
	return c
}

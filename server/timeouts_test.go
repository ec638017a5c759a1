package server_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
)

// The spec's timeouts over HTTP, each with a short deadline injected in
// place of the real one (proof generation 5 s: zkp.DefaultTimeout; chain
// submission 10 s: chain.DefaultSubmitTimeout). The federated submission
// Timeout is in TestSubmitFederatedUpdateErrors.

// TestProofTimeout: a proof that outlasts its deadline answers the spec's
// `... ZK proof generation timed out` for both operations.
func TestProofTimeout(t *testing.T) {
	t.Parallel()
	a := v1SharedApp(t)
	prover, err := zkp.NewProver(a.ZK, zkp.WithTimeout(time.Microsecond))
	require.NoError(t, err)
	att, err := attest.New(prover, a.Ledger, attest.WithTrust(a.Trust))
	require.NoError(t, err)
	f := setup(t, setupOpts{svcOpts: []healthagents.Option{healthagents.WithAttestor(att)}})
	env := f.seal(t, baseRecord())

	status, _, body := f.do(t, "POST", "/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC001"})
	requireDetail(t, status, body, http.StatusInternalServerError, "Eligibility check failed: ZK proof generation timed out")
	status, _, body = f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": env, "drug_code": "6809"})
	requireDetail(t, status, body, http.StatusInternalServerError, "Prescription validation failed: ZK proof generation timed out")
}

// TestChainSubmissionTimeout: a node that accepts the verification
// transaction and never mines it (a proxy to a real JSON-RPC node that
// swallows eth_sendRawTransaction) makes the submission run out its
// deadline; the request answers 503 `Service temporarily unavailable`
// instead of waiting longer, and no unverified result goes out.
func TestChainSubmissionTimeout(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a := v1SharedApp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rpcAddr := ln.Addr().String()
	ln.Close()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(rpcAddr), chain.WithKey(key))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	require.NoError(t, attest.Register(ctx, node, a.ZK))

	target, err := url.Parse("http://" + rpcAddr)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(target)
	dropping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "eth_sendRawTransaction" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x%064x"}`, msg.ID, 1)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(dropping.Close)
	remote, err := chain.Dial(ctx, dropping.URL, chain.DialConfig{Key: hex.EncodeToString(crypto.FromECDSA(key)), Registry: node.Registry().Hex()},
		chain.WithSubmitTimeout(500*time.Millisecond), chain.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { remote.Close() })
	prover, err := zkp.NewProver(a.ZK, zkp.WithTimeout(testProofTimeout))
	require.NoError(t, err)
	att, err := attest.New(prover, remote, attest.WithTrust(a.Trust))
	require.NoError(t, err)
	f := setup(t, setupOpts{svcOpts: []healthagents.Option{healthagents.WithAttestor(att)}})

	status, _, body := f.do(t, "POST", "/verify-eligibility", map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"})
	requireDetail(t, status, body, http.StatusServiceUnavailable, "Service temporarily unavailable")
	require.NotContains(t, f.logs.String(), "W123456789", "no plaintext in the logs")
}

package chain_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// r is the BN254 scalar field order; p the base field order.
var (
	r = ecc.BN254.ScalarField()
	p = func() *big.Int {
		v, _ := new(big.Int).SetString("21888242871839275222246405745257275088696311157297823662689037894645226208583", 10)
		return v
	}()
)

func TestHonestProof(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := shared(t)
	st := prove(t, 7)

	ok, err := l.Check(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, ok, "eth_call verification")

	rc, err := l.Submit(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, rc.Verified)
	assert.NotZero(t, rc.BlockNumber)
	assert.Greater(t, rc.GasUsed, uint64(21_000))
	assert.NotEqual(t, common.Hash{}, rc.TxHash)
	t.Logf("first verification of a statement: %d gas", rc.GasUsed)

	got, err := l.Statement(ctx, rc.TxHash)
	require.NoError(t, err)
	assert.Equal(t, fixtureKind, got.Kind)
	assert.Equal(t, l.Account(), got.Submitter)
	assert.Equal(t, rc.TxHash, got.TxHash)
	assert.Equal(t, rc.BlockNumber, got.BlockNumber)
	require.Len(t, got.Inputs, 3)
	assert.Equal(t, 0, got.Inputs[0].Cmp(big.NewInt(fixtureIssuer)))
	assert.Equal(t, 0, got.Inputs[1].Cmp(big.NewInt(7)))
	assert.Equal(t, 0, got.Inputs[2].Cmp(chain.CircuitID(fixtureKind)))
	assert.NotEqual(t, common.Address{}, got.Verifier)
	var packed []byte
	for _, in := range st.inputs {
		packed = append(packed, common.BigToHash(in).Bytes()...)
	}
	assert.Equal(t, crypto.Keccak256Hash(packed), got.InputsHash)
}

// tamperings returns the rejected variants of an honest statement.
func tamperings(st provedStatement) map[string]provedStatement {
	with := func(f func(proof *[8]*big.Int, inputs *[]*big.Int)) provedStatement {
		pr, in := clone(st.proof), cloneInputs(st.inputs)
		f(&pr, &in)
		return provedStatement{proof: pr, inputs: in}
	}
	other := func(i int) func(*[8]*big.Int, *[]*big.Int) {
		return func(pr *[8]*big.Int, _ *[]*big.Int) { pr[i].Add(pr[i], big.NewInt(1)) }
	}
	return map[string]provedStatement{
		"fail/A.x+1 (off curve)":    with(other(0)),
		"fail/B.x.im+1 (off curve)": with(other(2)),
		"fail/C.y+1 (off curve)":    with(other(7)),
		"fail/A and C swapped (valid points)": with(func(pr *[8]*big.Int, _ *[]*big.Int) {
			pr[0], pr[1], pr[6], pr[7] = pr[6], pr[7], pr[0], pr[1]
		}),
		"fail/A negated (valid point)": with(func(pr *[8]*big.Int, _ *[]*big.Int) {
			pr[1] = new(big.Int).Sub(p, pr[1])
		}),
		"fail/changed public input": with(func(_ *[8]*big.Int, in *[]*big.Int) {
			(*in)[1].Add((*in)[1], big.NewInt(1))
		}),
		"fail/inputs swapped": with(func(_ *[8]*big.Int, in *[]*big.Int) {
			(*in)[0], (*in)[1] = (*in)[1], (*in)[0]
		}),
		"fail/input plus r (not below r)": with(func(_ *[8]*big.Int, in *[]*big.Int) {
			(*in)[1].Add((*in)[1], r)
		}),
		"fail/input = 2^256-1": with(func(_ *[8]*big.Int, in *[]*big.Int) {
			(*in)[1] = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
		}),
		"fail/missing input": with(func(_ *[8]*big.Int, in *[]*big.Int) { *in = (*in)[:1] }),
		"fail/extra input": with(func(_ *[8]*big.Int, in *[]*big.Int) {
			*in = append(*in, big.NewInt(0))
		}),
		"fail/A at infinity": with(func(pr *[8]*big.Int, _ *[]*big.Int) {
			pr[0], pr[1] = big.NewInt(0), big.NewInt(0)
		}),
		"fail/A.x = p (not below p)": with(func(pr *[8]*big.Int, _ *[]*big.Int) {
			pr[0] = new(big.Int).Add(pr[0], p)
		}),
		"fail/B.y.re = 2^256-1": with(func(pr *[8]*big.Int, _ *[]*big.Int) {
			pr[5] = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
		}),
		"fail/all zero": with(func(pr *[8]*big.Int, _ *[]*big.Int) {
			for i := range pr {
				pr[i] = big.NewInt(0)
			}
		}),
	}
}

func TestRejected(t *testing.T) {
	t.Parallel()
	l := shared(t)
	honest := prove(t, 11)
	for name, tc := range tamperings(honest) {
		if name == "fail/inputs swapped" {
			// The three-input circuit constrains only the inputs' sum, so
			// swapping them is a true statement for it; TestCrossCheck-
			// GnarkVerifier keeps this case with the two-input circuit.
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ok, err := l.Check(ctx, fixtureKind, tc.proof, tc.inputs)
			require.NoError(t, err)
			assert.False(t, ok, "eth_call must reject")

			// The registry reverts: nothing is recorded (a statement that is
			// not of its shape is not even sent).
			rc, err := l.Submit(ctx, fixtureKind, tc.proof, tc.inputs)
			require.ErrorIs(t, err, chain.ErrRejected)
			assert.NotErrorIs(t, err, chain.ErrUnavailable)
			assert.False(t, rc.Verified)
			if rc.TxHash != (common.Hash{}) {
				_, err = l.Statement(ctx, rc.TxHash)
				assert.ErrorIs(t, err, chain.ErrReverted)
			}
		})
	}
}

func TestNotEncodable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := shared(t)
	st := prove(t, 11)
	for name, mutate := range map[string]func(*[8]*big.Int, []*big.Int){
		"fail/negative input": func(_ *[8]*big.Int, in []*big.Int) { in[0] = big.NewInt(-1) },
		"fail/2^256 input":    func(_ *[8]*big.Int, in []*big.Int) { in[0] = new(big.Int).Lsh(big.NewInt(1), 256) },
		"fail/nil proof word": func(pr *[8]*big.Int, _ []*big.Int) { pr[3] = nil },
		"fail/nil input":      func(_ *[8]*big.Int, in []*big.Int) { in[1] = nil },
		"fail/negative proof": func(pr *[8]*big.Int, _ []*big.Int) { pr[0] = big.NewInt(-5) },
	} {
		pr, in := clone(st.proof), cloneInputs(st.inputs)
		mutate(&pr, in)
		ok, err := l.Check(ctx, fixtureKind, pr, in)
		require.NoError(t, err, name)
		assert.False(t, ok, name)
		rc, err := l.Submit(ctx, fixtureKind, pr, in)
		require.ErrorIs(t, err, chain.ErrRejected, name)
		assert.Equal(t, chain.Receipt{}, rc, name)
	}
}

func TestUnknownKind(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := shared(t)
	st := prove(t, 7)
	_, err := l.Check(ctx, "no-such-kind", st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrUnknownKind)
	_, err = l.Submit(ctx, "no-such-kind", st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrUnknownKind)
	_, err = l.Check(ctx, "", st.proof, st.inputs)
	require.Error(t, err)
	_, err = l.Check(ctx, chain.Kind(strings.Repeat("k", 33)), st.proof, st.inputs)
	require.Error(t, err)
}

func TestRegisterIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newLedger(t)
	first, err := l.Verifier(ctx, fixtureKind)
	require.NoError(t, err)
	require.NotEqual(t, common.Address{}, first)

	require.NoError(t, l.Register(ctx, fixtureKind, fixtureVK(t)))
	again, err := l.Verifier(ctx, fixtureKind)
	require.NoError(t, err)
	assert.Equal(t, first, again, "same key: no new verifier")

	// Register refuses a different key for the kind: the verifier and the
	// proofs made with the registered key stay as they are.
	vk := fixtureVK(t)
	vk.IC[0], vk.IC[1] = vk.IC[1], vk.IC[0]
	err = l.Register(ctx, fixtureKind, vk)
	require.ErrorIs(t, err, chain.ErrVerifierMismatch)
	assert.Contains(t, err.Error(), first.Hex())
	kept, err := l.Verifier(ctx, fixtureKind)
	require.NoError(t, err)
	assert.Equal(t, first, kept)
	st := prove(t, 7)
	ok, err := l.Check(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, ok)

	// Two kinds can share a key.
	require.NoError(t, l.Register(ctx, "fixture-copy", fixtureVK(t)))
	ok, err = l.Check(ctx, "fixture-copy", st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestRegisterRejectsBadKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := shared(t)
	vk := fixtureVK(t)
	vk.Alpha1[1] = new(big.Int).Add(vk.Alpha1[1], big.NewInt(1)) // off curve: the constructor reverts
	err := l.Register(ctx, "bad-key", vk)
	require.ErrorIs(t, err, chain.ErrReverted)
	require.Error(t, l.Register(ctx, "no-ic", chain.VerifyingKey{}))
}

func TestConcurrentSubmitsShareBlocks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newLedger(t)
	const n = 20
	receipts := make([]chain.Receipt, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			st := prove(t, int64(100+i%4))
			receipts[i], errs[i] = l.Submit(ctx, fixtureKind, st.proof, st.inputs)
		})
	}
	wg.Wait()
	blocks := map[uint64]int{}
	nonces := map[common.Hash]bool{}
	for i := range n {
		require.NoError(t, errs[i], "submit %d", i)
		assert.True(t, receipts[i].Verified)
		blocks[receipts[i].BlockNumber]++
		nonces[receipts[i].TxHash] = true
	}
	assert.Len(t, nonces, n, "distinct transactions")
	assert.Less(t, len(blocks), n, "concurrent submissions share blocks: %v", blocks)
	t.Logf("%d submissions mined in %d blocks: %v", n, len(blocks), blocks)
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestDialUnreachable(t *testing.T) {
	t.Parallel()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	cfg := chain.DialConfig{Key: fmt.Sprintf("%x", crypto.FromECDSA(key)), Registry: common.Address{1}.Hex()}

	t.Run("fail/closed port", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err := chain.Dial(ctx, "http://"+freePort(t), cfg)
		require.ErrorIs(t, err, chain.ErrUnavailable)
	})
	t.Run("fail/node never answers", func(t *testing.T) {
		t.Parallel()
		stop := make(chan struct{})
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		}))
		defer hang.Close()
		defer close(stop)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err := chain.Dial(ctx, hang.URL, cfg)
		require.ErrorIs(t, err, chain.ErrUnavailable)
	})
	t.Run("fail/node answers 503", func(t *testing.T) {
		t.Parallel()
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}))
		defer down.Close()
		_, err := chain.Dial(t.Context(), down.URL, cfg)
		require.ErrorIs(t, err, chain.ErrUnavailable)
	})
	t.Run("fail/bad key", func(t *testing.T) {
		t.Parallel()
		_, err := chain.Dial(t.Context(), "http://127.0.0.1:1", chain.DialConfig{Key: "zz-secret", Registry: cfg.Registry})
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "zz-secret")
		assert.NotErrorIs(t, err, chain.ErrUnavailable)
	})
	t.Run("fail/bad registry address", func(t *testing.T) {
		t.Parallel()
		_, err := chain.Dial(t.Context(), "http://127.0.0.1:1", chain.DialConfig{Key: cfg.Key, Registry: "nope"})
		require.Error(t, err)
	})
}

// TestJSONRPCEndpoint drives the CHAIN_ENDPOINT path for real: the simulated
// chain serves JSON-RPC over HTTP on loopback, Deploy puts the contracts on
// it through that endpoint, and a Dial'd Ledger verifies through it. Killing
// the node then makes Submit and Ping report ErrUnavailable.
func TestJSONRPCEndpoint(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	addr := freePort(t)
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithKey(key), chain.WithHTTP(addr), chain.WithFunded(crypto.PubkeyToAddress(ownerKey.PublicKey)))
	require.NoError(t, err)
	defer node.Close()
	endpoint, network := node.Network()
	assert.Equal(t, "http://"+addr, endpoint)
	assert.Equal(t, "simulated", network)

	// The owner's key is at hand here (the cold owner is
	// TestLedgerGovernedJSONRPC's): the owner actions are sent.
	addrs, err := chain.Deploy(ctx, endpoint, key, chain.DeployConfig{OwnerKey: ownerKey, Verifiers: map[chain.Kind]chain.VerifyingKey{fixtureKind: fixtureVK(t)}})
	require.NoError(t, err)
	require.NotEqual(t, common.Address{}, addrs.Registry)
	require.Contains(t, addrs.Verifiers, fixtureKind)
	require.Empty(t, addrs.Pending)

	remote, err := chain.Dial(ctx, endpoint, chain.DialConfig{
		Key:      "0x" + fmt.Sprintf("%x", crypto.FromECDSA(key)),
		Registry: addrs.Registry.Hex(),
		Owner:    crypto.PubkeyToAddress(ownerKey.PublicKey).Hex(),
		ChainID:  1337,
	}, chain.WithPollInterval(50*time.Millisecond), chain.WithOwnerKey(ownerKey))
	require.NoError(t, err)
	defer remote.Close()
	_, name := remote.Network()
	assert.Equal(t, "dev", name)
	require.NoError(t, remote.Ping(ctx))
	_, err = remote.RegisterIssuer(ctx, big.NewInt(fixtureIssuer), common.Address{})
	require.NoError(t, err)

	st := prove(t, 5)
	ok, err := remote.Check(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, ok)
	rc, err := remote.Submit(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, rc.Verified)
	got, err := remote.Statement(ctx, rc.TxHash)
	require.NoError(t, err)
	assert.Equal(t, fixtureKind, got.Kind)

	// A consumer with its own client finds the statements an issuer vouched
	// for by the indexed issuer topic alone (eth_getLogs), and none under
	// another issuer. The topic comes from the event's canonical
	// signature, not from our bindings.
	consumer, err := ethclient.DialContext(ctx, endpoint)
	require.NoError(t, err)
	defer consumer.Close()
	signature := crypto.Keccak256Hash([]byte("StatementRecorded(uint256,uint256,uint256,address,address)"))
	byIssuer := func(issuer int64) []common.Hash {
		found, err := consumer.FilterLogs(ctx, ethereum.FilterQuery{
			FromBlock: big.NewInt(0), Addresses: []common.Address{addrs.Registry},
			Topics: [][]common.Hash{{signature}, nil, {common.BigToHash(big.NewInt(issuer))}},
		})
		require.NoError(t, err)
		var txs []common.Hash
		for _, lg := range found {
			txs = append(txs, lg.TxHash)
		}
		return txs
	}
	assert.Equal(t, []common.Hash{rc.TxHash}, byIssuer(fixtureIssuer))
	assert.Empty(t, byIssuer(fixtureIssuer+1))

	bad := clone(st.proof)
	bad[0], bad[6] = bad[6], bad[0]
	bad[1], bad[7] = bad[7], bad[1]
	_, err = remote.Submit(ctx, fixtureKind, bad, st.inputs)
	require.ErrorIs(t, err, chain.ErrRejected)

	_, err = chain.Dial(ctx, endpoint, chain.DialConfig{Key: fmt.Sprintf("%x", crypto.FromECDSA(key)), Registry: common.Address{7}.Hex()})
	require.ErrorIs(t, err, chain.ErrNoContract)
	_, err = chain.Dial(ctx, endpoint, chain.DialConfig{Key: fmt.Sprintf("%x", crypto.FromECDSA(key)), Registry: addrs.Registry.Hex(), ChainID: 1})
	require.Error(t, err)

	// Another key can verify but not bind a circuit.
	other, err := crypto.GenerateKey()
	require.NoError(t, err)
	stranger, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: fmt.Sprintf("%x", crypto.FromECDSA(other)), Registry: addrs.Registry.Hex()})
	require.NoError(t, err)
	defer stranger.Close()
	require.ErrorIs(t, stranger.Register(ctx, "stranger", fixtureVK(t)), chain.ErrOwnerAction)
	ok, err = stranger.Check(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, ok)

	// The node goes away.
	require.NoError(t, node.Close())
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = remote.Submit(sctx, fixtureKind, st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrUnavailable)
	require.ErrorIs(t, remote.Ping(sctx), chain.ErrUnavailable)
	_, err = remote.Check(sctx, fixtureKind, st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrUnavailable)
}

func TestSubmitTimeout(t *testing.T) {
	t.Parallel()
	st := prove(t, 7)
	t.Run("fail/deadline before sending", func(t *testing.T) {
		t.Parallel()
		l := newLedger(t, chain.WithSubmitTimeout(time.Nanosecond))
		_, err := l.Submit(t.Context(), fixtureKind, st.proof, st.inputs)
		require.ErrorIs(t, err, chain.ErrUnavailable)
	})
	t.Run("fail/sent but never mined", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		key, err := crypto.GenerateKey()
		require.NoError(t, err)
		ownerKey, err := crypto.GenerateKey()
		require.NoError(t, err)
		node, err := chain.NewSimulated(ctx, chain.WithKey(key), chain.WithHTTP(freePort(t)), chain.WithFunded(crypto.PubkeyToAddress(ownerKey.PublicKey)))
		require.NoError(t, err)
		defer node.Close()
		endpoint, _ := node.Network()
		addrs, err := chain.Deploy(ctx, endpoint, key, chain.DeployConfig{OwnerKey: ownerKey, Verifiers: map[chain.Kind]chain.VerifyingKey{fixtureKind: fixtureVK(t)}})
		require.NoError(t, err)
		registerIssuerOn(t, endpoint, key, ownerKey, addrs.Registry)

		// A node that accepts transactions and silently drops them: a proxy
		// to the real one that swallows eth_sendRawTransaction.
		target, err := url.Parse(endpoint)
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
		defer dropping.Close()

		l, err := chain.Dial(ctx, dropping.URL, chain.DialConfig{Key: fmt.Sprintf("%x", crypto.FromECDSA(key)), Registry: addrs.Registry.Hex()},
			chain.WithSubmitTimeout(300*time.Millisecond), chain.WithPollInterval(20*time.Millisecond))
		require.NoError(t, err)
		defer l.Close()
		_, err = l.Submit(ctx, fixtureKind, st.proof, st.inputs)
		require.ErrorIs(t, err, chain.ErrUnavailable)
		// The deadline may strike while waiting between polls or during a
		// receipt request; either way the error names the transaction, so
		// the caller can look it up later.
		assert.Regexp(t, `tx 0x[0-9a-f]{64}( not mined in time)?:`, err.Error())
	})
}

// registerIssuerOn registers fixtureIssuer in the registry at endpoint, as
// its owner.
func registerIssuerOn(t *testing.T, endpoint string, key, ownerKey *ecdsa.PrivateKey, registry common.Address) {
	t.Helper()
	l, err := chain.Dial(t.Context(), endpoint, chain.DialConfig{Key: fmt.Sprintf("%x", crypto.FromECDSA(key)), Registry: registry.Hex()},
		chain.WithOwnerKey(ownerKey), chain.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	defer l.Close()
	_, err = l.RegisterIssuer(t.Context(), big.NewInt(fixtureIssuer), common.Address{})
	require.NoError(t, err)
}

func TestClosed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l, err := chain.NewSimulated(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "Close is idempotent")
	st := prove(t, 7)
	_, err = l.Submit(ctx, fixtureKind, st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrClosed)
	_, err = l.Check(ctx, fixtureKind, st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrClosed)
	require.ErrorIs(t, l.Ping(ctx), chain.ErrClosed)
}

func TestStatementNotFound(t *testing.T) {
	t.Parallel()
	_, err := shared(t).Statement(t.Context(), common.Hash{1, 2, 3})
	require.ErrorIs(t, err, chain.ErrNotFound)
}

// TestNoProducerLeak runs alone (not parallel) so that no other Ledger
// starts or stops meanwhile. go-ethereum's own leftovers (a leveldb
// goroutine for ~2 s, process-wide tx senders) are not counted: only this
// package's goroutines are.
func TestNoProducerLeak(t *testing.T) {
	count := func() int {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		return strings.Count(string(buf), "healthagents/chain.(*producer).run")
	}
	before := count()
	l, err := chain.NewSimulated(t.Context())
	require.NoError(t, err)
	assert.Equal(t, before+1, count())
	require.NoError(t, l.Close())
	assert.Equal(t, before, count())
}

func TestNetwork(t *testing.T) {
	t.Parallel()
	endpoint, name := shared(t).Network()
	assert.Equal(t, "embedded", endpoint)
	assert.Equal(t, "simulated", name)
	for id, want := range map[uint64]string{1: "mainnet", 11155111: "sepolia", 17000: "holesky", 1337: "dev", 31337: "dev", 99: "chain-99"} {
		assert.Equal(t, want, chain.NetworkName(id))
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]chain.Option{
		"fail/zero timeout":   chain.WithSubmitTimeout(0),
		"fail/tiny gas":       chain.WithGasLimit(1),
		"fail/nil logger":     chain.WithLogger(nil),
		"fail/nil key":        chain.WithKey(nil),
		"fail/negative delay": chain.WithBlockDelay(-1),
		"fail/port 0":         chain.WithHTTP("127.0.0.1:0"),
		"fail/no port":        chain.WithHTTP("localhost"),
		"fail/zero poll":      chain.WithPollInterval(0),
	} {
		_, err := chain.NewSimulated(t.Context(), opt)
		assert.Error(t, err, name)
	}
	_ = errors.New
}

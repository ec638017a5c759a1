package rorpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/rorpc"
)

func post(t *testing.T, url, method string, params ...any) map[string]any {
	t.Helper()
	if params == nil {
		params = []any{}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

func TestReadOnlyRPC(t *testing.T) {
	ctx := t.Context()
	l, err := chain.NewSimulated(ctx, chain.WithDataDir(t.TempDir()))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	rc, ok := l.RPCClient()
	require.True(t, ok)
	addr, stop, err := rorpc.Listen(":0", rc)
	require.NoError(t, err)
	// t.Context is already cancelled when cleanups run; Shutdown waiting on a
	// connection would then fail with "context canceled".
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, stop(sctx))
	})
	assert.Contains(t, addr, "127.0.0.1:")
	url := "http://" + addr

	assert.Equal(t, "0x539", post(t, url, "eth_chainId")["result"])
	assert.NotNil(t, post(t, url, "eth_blockNumber")["result"])
	assert.NotNil(t, post(t, url, "net_version")["result"])
	code := post(t, url, "eth_getCode", l.Registry().Hex(), "latest")
	assert.NotEqual(t, "0x", code["result"])
	blk := post(t, url, "eth_getBlockByNumber", "0x1", false)
	assert.NotNil(t, blk["result"])
	logs := post(t, url, "eth_getLogs", map[string]any{"fromBlock": "0x0", "toBlock": "latest", "address": l.Registry().Hex()})
	assert.Nil(t, logs["error"])
	for _, m := range []string{"eth_sendTransaction", "eth_sendRawTransaction", "personal_unlockAccount",
		"admin_addPeer", "miner_start", "eth_accounts", "debug_setHead", "txpool_content"} {
		out := post(t, url, m, "0x00")
		require.NotNil(t, out["error"], m)
		assert.EqualValues(t, -32601, out["error"].(map[string]any)["code"], m)
	}

	// ethclient works against the listener.
	ec, err := ethclient.DialContext(ctx, url)
	require.NoError(t, err)
	defer ec.Close()
	id, err := ec.ChainID(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1337, id.Int64())
	c, err := ec.CodeAt(ctx, l.Registry(), nil)
	require.NoError(t, err)
	assert.NotEmpty(t, c)
}

// Package rorpc serves an Ethereum JSON-RPC endpoint that forwards only
// read-only methods (CHAIN_RPC_LISTEN), so third parties can check decisions
// on the embedded chain; every sending, account or admin method is refused.
package rorpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
)

// allowed is the read-only method list; anything else gets -32601.
var allowed = map[string]bool{
	"eth_chainId": true, "eth_blockNumber": true, "eth_getTransactionReceipt": true,
	"eth_getTransactionByHash": true, "eth_getLogs": true, "eth_call": true, "eth_getCode": true,
	"eth_getBlockByNumber": true, "eth_getBlockByHash": true, "eth_getBalance": true,
	"eth_getStorageAt": true, "eth_getTransactionCount": true, "eth_estimateGas": true,
	"eth_gasPrice": true, "eth_feeHistory": true, "eth_maxPriorityFeePerGas": true,
	"net_version": true, "web3_clientVersion": true, "eth_syncing": true,
}

type request struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// Handler forwards allowed methods to c and refuses the rest.
func Handler(c *rpc.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "JSON-RPC over POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var batch []request
		if err := json.Unmarshal(body, &batch); err == nil {
			out := make([]response, 0, len(batch))
			for _, req := range batch {
				out = append(out, serve(r.Context(), c, req))
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			_ = json.NewEncoder(w).Encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error"}})
			return
		}
		_ = json.NewEncoder(w).Encode(serve(r.Context(), c, req))
	})
}

func serve(ctx context.Context, c *rpc.Client, req request) response {
	resp := response{JSONRPC: "2.0", ID: req.ID}
	if len(resp.ID) == 0 {
		resp.ID = json.RawMessage("null")
	}
	if !allowed[req.Method] {
		resp.Error = &rpcError{-32601, fmt.Sprintf("method %q is not available on this read-only endpoint", req.Method)}
		return resp
	}
	args := make([]any, len(req.Params))
	for i, p := range req.Params {
		args[i] = p
	}
	var result json.RawMessage
	if err := c.CallContext(ctx, &result, req.Method, args...); err != nil {
		code := -32000
		var re rpc.Error
		if errors.As(err, &re) {
			code = re.ErrorCode()
		}
		resp.Error = &rpcError{code, err.Error()}
		return resp
	}
	if result == nil {
		result = json.RawMessage("null")
	}
	resp.Result = result
	return resp
}

// Listen starts serving on addr; a bare port or empty host means loopback.
// It returns the bound address and a function that stops the server.
func Listen(addr string, c *rpc.Client) (string, func(context.Context) error, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("rorpc: CHAIN_RPC_LISTEN %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return "", nil, fmt.Errorf("rorpc: listen: %w", err)
	}
	srv := &http.Server{Handler: Handler(c), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), srv.Shutdown, nil
}

package chain

import "github.com/ethereum/go-ethereum/rpc"

// RPCClient is the raw JSON-RPC client under the Ledger's connection (the
// embedded chain's in-process endpoint), for a read-only listener; false when
// the connection is not JSON-RPC.
func (l *Ledger) RPCClient() (*rpc.Client, bool) {
	c, ok := l.client.(interface{ Client() *rpc.Client })
	if !ok {
		return nil, false
	}
	return c.Client(), true
}

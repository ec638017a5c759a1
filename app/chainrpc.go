package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/healthagents/healthagents/chain/rorpc"
)

// serveChainRPC starts the embedded chain's read-only JSON-RPC listener when
// CHAIN_RPC_LISTEN is set. Only reading methods pass (rorpc's allow-list):
// nothing can send a transaction or use an account through it.
func (a *App) serveChainRPC(cfg Config, logger *slog.Logger) error {
	if cfg.ChainRPCListen == "" {
		return nil
	}
	c, ok := a.Ledger.RPCClient()
	if !ok {
		return errors.New("CHAIN_RPC_LISTEN: the embedded chain has no JSON-RPC client")
	}
	addr, stop, err := rorpc.Listen(cfg.ChainRPCListen, c)
	if err != nil {
		return fmt.Errorf("CHAIN_RPC_LISTEN: %w", err)
	}
	a.ChainRPCAddr = addr
	a.closers = append(a.closers, closerFunc(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return stop(ctx)
	}))
	logger.Info("read-only chain JSON-RPC listening", "address", addr)
	return nil
}

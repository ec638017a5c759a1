package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
)

// chainCommand runs `healthagents chain deploy`: it deploys the statement
// registry and one verifier per circuit (holding this deployment's verifying
// keys from DATA_DIR/zkp) on the node at CHAIN_ENDPOINT, signed with
// CHAIN_PRIVATE_KEY, and prints the settings the service then needs.
func chainCommand(ctx context.Context, getenv func(string) string, logger *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) != 1 || args[0] != "deploy" {
		return errors.New("usage: healthagents chain deploy (with CHAIN_ENDPOINT and CHAIN_PRIVATE_KEY set)")
	}
	endpoint, keyHex := getenv("CHAIN_ENDPOINT"), getenv("CHAIN_PRIVATE_KEY")
	if endpoint == "" || keyHex == "" {
		return errors.New("chain deploy needs CHAIN_ENDPOINT and CHAIN_PRIVATE_KEY")
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(keyHex, "0x"))
	if err != nil {
		return errors.New("CHAIN_PRIVATE_KEY is not a hex secp256k1 private key")
	}
	dataDir := getenv("DATA_DIR")
	if dataDir == "" {
		dataDir = "data"
	}
	sys, err := zkp.LoadOrSetup(ctx, filepath.Join(dataDir, "zkp"))
	if err != nil {
		return fmt.Errorf("zk keys: %w", err)
	}
	verifiers := map[chain.Kind]chain.VerifyingKey{}
	for _, name := range zkp.CircuitNames() {
		vk, err := chain.VerifyingKeyFromGnark(sys.VerifyingKey(name))
		if err != nil {
			return err
		}
		verifiers[chain.Kind(name)] = vk
	}
	addrs, err := chain.Deploy(ctx, endpoint, key, verifiers, chain.WithLogger(logger))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CHAIN_REGISTRY=%s\n", addrs.Registry.Hex())
	for _, name := range zkp.CircuitNames() {
		fmt.Fprintf(stdout, "# verifier %s: %s\n", name, addrs.Verifiers[chain.Kind(name)].Hex())
	}
	return nil
}

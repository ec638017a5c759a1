package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/pharmacy"
	"github.com/healthagents/healthagents/zkp"
)

// chainCommand runs `healthagents chain deploy`: it deploys the statement
// registry and one verifier per circuit (holding this deployment's verifying
// keys: ZK_KEYS_DIR's, or DATA_DIR/zkp's), then the pharmacy oracle (owned by the same
// account, its first writer), on the node at CHAIN_ENDPOINT, signed with
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
	sys, err := deployKeys(ctx, getenv, dataDir)
	if err != nil {
		return err
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
	oracle, err := deployOracle(ctx, endpoint, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CHAIN_REGISTRY=%s\n", addrs.Registry.Hex())
	fmt.Fprintf(stdout, "PHARMACY_ORACLE=%s\n", oracle.Hex())
	for _, name := range zkp.CircuitNames() {
		fmt.Fprintf(stdout, "# verifier %s: %s\n", name, addrs.Verifiers[chain.Kind(name)].Hex())
	}
	return nil
}

// deployOracle deploys a PharmacyOracle owned by key's account. It runs
// after chain.Deploy has finished, so the account's nonces are not shared.
func deployOracle(ctx context.Context, endpoint string, key *ecdsa.PrivateKey) (common.Address, error) {
	client, err := ethclient.DialContext(ctx, endpoint)
	if err != nil {
		return common.Address{}, fmt.Errorf("pharmacy oracle: %w", err)
	}
	defer client.Close()
	// A public chain may take longer than the service's 10 s to mine one.
	o, err := pharmacy.Deploy(ctx, client, key, pharmacy.WithSubmitTimeout(2*time.Minute))
	if err != nil {
		return common.Address{}, fmt.Errorf("pharmacy oracle: %w", err)
	}
	return o.Address(), nil
}

package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/pharmacy"
	"github.com/healthagents/healthagents/zkp"
)

const chainUsage = `usage: healthagents chain deploy [--owner-key FILE]
       healthagents chain register-issuer PUBLIC_KEY [--admin ADDRESS] [--owner-key FILE]
       healthagents chain retire-issuer PUBLIC_KEY [--owner-key FILE]
       healthagents chain set-submitter ADDRESS [--remove] [--owner-key FILE]
       healthagents chain revoke-nonce PUBLIC_KEY NONCE [--from ADMIN_ADDRESS] [--owner-key FILE]
       healthagents chain add-circuit KIND [--owner-key FILE]

deploy puts the GovernedRegistry (owned by CHAIN_OWNER, or the --owner-key account), one
verifier per circuit (ZK_KEYS_DIR's keys, or DATA_DIR/zkp's) and the pharmacy oracle on CHAIN_ENDPOINT, paid by
CHAIN_PRIVATE_KEY (the submitting key), and prints the settings the service needs.
The other commands are the registry owner's actions on CHAIN_REGISTRY: each prints an
unsigned transaction for the owner's cold wallet (JSON; sign its unsigned_rlp), or, given
--owner-key FILE (a hex key), sends it. PUBLIC_KEY is an issuer's iden3 compressed key
(healthagents issuer keygen); add-circuit deploys KIND's verifier with CHAIN_PRIVATE_KEY
(or the owner key) before binding it; revoke-nonce --from prepares the revocation for the
payer's own admin address (admin_address at registration) instead of the owner.`

// chainCommand runs `healthagents chain …`.
func chainCommand(ctx context.Context, getenv func(string) string, logger *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("chain: give a subcommand\n%s", chainUsage)
	}
	if args[0] == "deploy" {
		return chainDeploy(ctx, getenv, logger, args[1:], stdout)
	}
	return ownerCommand(ctx, getenv, args, stdout)
}

// chainDeploy deploys the GovernedRegistry owned by CHAIN_OWNER (or the
// --owner-key account), the verifiers of ZK_KEYS_DIR's or DATA_DIR/zkp's keys, then the
// pharmacy oracle, owned by the submitting account, its first writer.
func chainDeploy(ctx context.Context, getenv func(string) string, logger *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("chain deploy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ownerKeyFile := fs.String("owner-key", "", "file holding the registry owner's hex key: send the owner actions")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return fmt.Errorf("chain deploy: bad arguments\n%s", chainUsage)
	}
	endpoint, keyHex := getenv("CHAIN_ENDPOINT"), getenv("CHAIN_PRIVATE_KEY")
	if endpoint == "" || keyHex == "" {
		return errors.New("chain deploy needs CHAIN_ENDPOINT and CHAIN_PRIVATE_KEY")
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(keyHex, "0x"))
	if err != nil {
		return errors.New("CHAIN_PRIVATE_KEY is not a hex secp256k1 private key")
	}
	cfg := chain.DeployConfig{Verifiers: map[chain.Kind]chain.VerifyingKey{}}
	if o := getenv("CHAIN_OWNER"); o != "" {
		if !common.IsHexAddress(o) {
			return errors.New("CHAIN_OWNER must be a hex address")
		}
		cfg.Owner = common.HexToAddress(o)
	}
	if *ownerKeyFile != "" {
		if cfg.OwnerKey, err = readKeyFile(*ownerKeyFile); err != nil {
			return err
		}
	}
	if cfg.Owner == (common.Address{}) && cfg.OwnerKey == nil {
		return errors.New("chain deploy needs the registry owner: set CHAIN_OWNER (a cold wallet's address) or pass --owner-key FILE")
	}
	sys, err := deployKeys(ctx, getenv, dataDir(getenv))
	if err != nil {
		return err
	}
	for _, name := range zkp.CircuitNames() {
		vk, err := chain.VerifyingKeyFromGnark(sys.VerifyingKey(name))
		if err != nil {
			return err
		}
		cfg.Verifiers[chain.Kind(name)] = vk
	}
	addrs, err := chain.Deploy(ctx, endpoint, key, cfg, chain.WithLogger(logger), chain.WithSubmitTimeout(2*time.Minute))
	if err != nil {
		return err
	}
	oracle, err := deployOracle(ctx, endpoint, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CHAIN_REGISTRY=%s\n", addrs.Registry.Hex())
	fmt.Fprintf(stdout, "PHARMACY_ORACLE=%s\n", oracle.Hex())
	fmt.Fprintf(stdout, "CHAIN_OWNER=%s\n", addrs.Owner.Hex())
	for _, name := range zkp.CircuitNames() {
		fmt.Fprintf(stdout, "# verifier %s: %s\n", name, addrs.Verifiers[chain.Kind(name)].Hex())
	}
	for i, u := range addrs.Pending {
		fmt.Fprintf(stdout, "# owner action %d of %d, for the owner's wallet to sign and send in order: %s\n", i+1, len(addrs.Pending), u.Summary)
		if err := printUnsigned(stdout, u); err != nil {
			return err
		}
	}
	return nil
}

func dataDir(getenv func(string) string) string {
	if d := getenv("DATA_DIR"); d != "" {
		return d
	}
	return "data"
}

// readKeyFile reads a hex secp256k1 key from a file.
func readKeyFile(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("owner key: %w", err)
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
	if err != nil {
		return nil, errors.New("owner key file does not hold a hex secp256k1 private key")
	}
	return key, nil
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

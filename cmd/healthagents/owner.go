package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/zkp"
)

// ownerCommand runs one of the GovernedRegistry owner's actions on
// CHAIN_REGISTRY: printed as an unsigned transaction for a cold wallet, or
// sent given --owner-key.
func ownerCommand(ctx context.Context, getenv func(string) string, args []string, stdout io.Writer) error {
	name := args[0]
	fs := flag.NewFlagSet("chain "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ownerKeyFile := fs.String("owner-key", "", "file holding the registry owner's hex key: send instead of printing")
	admin := fs.String("admin", "", "register-issuer: an address that may revoke the issuer's nonces")
	remove := fs.Bool("remove", false, "set-submitter: retire the submitter instead")
	from := fs.String("from", "", "revoke-nonce: prepare it from this address (the payer's admin) instead of the owner")
	// Flags may follow the positional arguments.
	var pos []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return fmt.Errorf("chain %s: bad arguments\n%s", name, chainUsage)
		}
		if fs.NArg() == 0 {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	endpoint, registry := getenv("CHAIN_ENDPOINT"), getenv("CHAIN_REGISTRY")
	if endpoint == "" || !common.IsHexAddress(registry) {
		return fmt.Errorf("chain %s needs CHAIN_ENDPOINT and CHAIN_REGISTRY (the GovernedRegistry's address)", name)
	}
	client, err := ethclient.DialContext(ctx, endpoint)
	if err != nil {
		return fmt.Errorf("CHAIN_ENDPOINT: %w", err)
	}
	defer client.Close()
	g := chain.NewGoverned(client, common.HexToAddress(registry))

	var action chain.OwnerAction
	switch {
	case name == "register-issuer" && len(pos) == 1, name == "retire-issuer" && len(pos) == 1:
		h, err := keyHash(pos[0])
		if err != nil {
			return err
		}
		if name == "retire-issuer" {
			action = g.RetireIssuer(h)
			break
		}
		if *admin != "" && !common.IsHexAddress(*admin) {
			return errors.New("--admin must be a hex address")
		}
		action = g.RegisterIssuer(h, common.HexToAddress(*admin))
	case name == "revoke-nonce" && len(pos) == 2:
		h, err := keyHash(pos[0])
		if err != nil {
			return err
		}
		n, err := strconv.ParseUint(pos[1], 10, 64)
		if err != nil {
			return errors.New("NONCE must be the credential's revocation_nonce, a non-negative integer")
		}
		action = g.RevokeNonce(h, n)
	case name == "set-submitter" && len(pos) == 1:
		if !common.IsHexAddress(pos[0]) {
			return errors.New("ADDRESS must be a hex address")
		}
		action = g.SetSubmitter(common.HexToAddress(pos[0]), !*remove)
	case name == "add-circuit" && len(pos) == 1:
		a, err := addCircuit(ctx, getenv, client, g, chain.Kind(pos[0]), *ownerKeyFile, stdout)
		if err != nil || a == nil {
			return err
		}
		action = *a
	default:
		return fmt.Errorf("chain %s: bad arguments\n%s", name, chainUsage)
	}

	if *ownerKeyFile != "" {
		key, err := readKeyFile(*ownerKeyFile)
		if err != nil {
			return err
		}
		tx, err := chain.NewTransactor(ctx, client, key, time.Second)
		if err != nil {
			return err
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		r, err := g.Apply(sctx, tx, action)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "sent %s: tx %s in block %s\n", action.Summary, r.TxHash.Hex(), r.BlockNumber)
		return err
	}
	var owner common.Address
	if *from != "" {
		if name != "revoke-nonce" || !common.IsHexAddress(*from) {
			return errors.New("--from takes a hex address, and only for revoke-nonce (a payer's admin revoking its own nonces)")
		}
		owner = common.HexToAddress(*from)
	} else if owner, err = ownerAddress(ctx, getenv, g); err != nil {
		return err
	}
	u, err := g.Unsigned(ctx, owner, action)
	if err != nil {
		return err
	}
	return printUnsigned(stdout, u)
}

// addCircuit deploys kind's verifier (DATA_DIR/zkp's key) and returns the
// addCircuit action; nil when the circuit is bound already to that key.
func addCircuit(ctx context.Context, getenv func(string) string, client *ethclient.Client, g *chain.Governed, kind chain.Kind, ownerKeyFile string, stdout io.Writer) (*chain.OwnerAction, error) {
	id := chain.CircuitID(kind)
	if v, err := g.VerifierOf(ctx, id); err != nil {
		return nil, err
	} else if v != (common.Address{}) {
		_, err := fmt.Fprintf(stdout, "circuit %s (id %s) is bound to verifier %s already; verifiers are immutable per circuit id\n", kind, id, v.Hex())
		return nil, err
	}
	sys, err := deployKeys(ctx, getenv, dataDir(getenv))
	if err != nil {
		return nil, err
	}
	gvk := sys.VerifyingKey(string(kind))
	if gvk == nil {
		return nil, fmt.Errorf("no circuit %q in the ZK keys (circuits: %s)", kind, strings.Join(zkp.CircuitNames(), ", "))
	}
	vk, err := chain.VerifyingKeyFromGnark(gvk)
	if err != nil {
		return nil, err
	}
	if vk.PublicInputs() != 3 {
		return nil, fmt.Errorf("circuit %q has %d public inputs; the registry binds circuits whose public inputs are [issuer key hash, digest, circuit id]", kind, vk.PublicInputs())
	}
	payer := getenv("CHAIN_PRIVATE_KEY")
	var s chain.Sender
	switch {
	case payer != "":
		key, err := crypto.HexToECDSA(strings.TrimPrefix(payer, "0x"))
		if err != nil {
			return nil, errors.New("CHAIN_PRIVATE_KEY is not a hex secp256k1 private key")
		}
		if s, err = chain.NewTransactor(ctx, client, key, time.Second); err != nil {
			return nil, err
		}
	case ownerKeyFile != "":
		key, err := readKeyFile(ownerKeyFile)
		if err != nil {
			return nil, err
		}
		if s, err = chain.NewTransactor(ctx, client, key, time.Second); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("add-circuit deploys the verifier first: set CHAIN_PRIVATE_KEY (or pass --owner-key) to pay for it")
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	addr, err := chain.DeployVerifier(dctx, s, vk)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "# verifier %s deployed at %s\n", kind, addr.Hex())
	a := g.AddCircuit(id, addr)
	return &a, nil
}

// keyHash reads an issuer's public key (iden3 compressed hex) and returns
// its key hash.
func keyHash(pub string) (*big.Int, error) {
	pk, err := credential.ParsePublicKey(pub)
	if err != nil {
		return nil, errors.New("PUBLIC_KEY must be an issuer's iden3 compressed public key (64 hex digits)")
	}
	return credential.IssuerKeyHash(pk)
}

// ownerAddress is CHAIN_OWNER, or else the registry's owner.
func ownerAddress(ctx context.Context, getenv func(string) string, g *chain.Governed) (common.Address, error) {
	owner, err := g.Owner(ctx)
	if err != nil {
		return common.Address{}, fmt.Errorf("read the registry's owner: %w", err)
	}
	if o := getenv("CHAIN_OWNER"); o != "" && common.HexToAddress(o) != owner {
		return common.Address{}, fmt.Errorf("registry %s is owned by %s, not CHAIN_OWNER %s", g.Address().Hex(), owner.Hex(), o)
	}
	return owner, nil
}

// printUnsigned prints an owner action as JSON for a cold wallet.
func printUnsigned(w io.Writer, u chain.UnsignedTx) error {
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{
		"summary": u.Summary, "chain_id": u.ChainID.String(), "from": u.From.Hex(), "to": u.To.Hex(),
		"nonce": u.Nonce, "gas": u.Gas, "max_priority_fee_per_gas": u.TipCap.String(), "max_fee_per_gas": u.FeeCap.String(),
		"data": u.Data, "unsigned_rlp": u.RLPHex,
	})
}

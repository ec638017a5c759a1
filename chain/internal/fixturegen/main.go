// Command fixturegen makes the chain package's test fixture once: Groth16 keys
// for the fixture circuit and gnark's exported Solidity verifier for them.
// Existing files are kept unless -force is given, so `go generate` stays
// reproducible (groth16.Setup has no seed).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/consensys/gnark/logger"
	"github.com/healthagents/healthagents/chain/internal/fixture"
)

func main() {
	keys := flag.String("keys", "internal/fixture/testdata", "directory of the fixture keys")
	sol := flag.String("solidity", "../contracts/fixtures/GnarkVerifier.sol", "where to write gnark's exported verifier")
	force := flag.Bool("force", false, "make new keys even if they exist")
	flag.Parse()
	if err := run(*keys, *sol, *force); err != nil {
		fmt.Fprintln(os.Stderr, "fixturegen:", err)
		os.Exit(1)
	}
}

func run(keyDir, solPath string, force bool) error {
	logger.Disable()
	_, errPK := os.Stat(filepath.Join(keyDir, fixture.ProvingKeyFile))
	_, errVK := os.Stat(filepath.Join(keyDir, fixture.VerifyingKeyFile))
	_, errSol := os.Stat(solPath)
	if !force && errPK == nil && errVK == nil && errSol == nil {
		return nil
	}
	k, err := fixture.Setup()
	if err != nil {
		return err
	}
	if err := k.Save(keyDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(solPath), 0o755); err != nil {
		return err
	}
	f, err := os.Create(solPath)
	if err != nil {
		return err
	}
	if err := k.VK.ExportSolidity(f); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

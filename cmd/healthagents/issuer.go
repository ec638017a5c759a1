package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/healthagents/healthagents/credential"
)

// issuerCommand runs `healthagents issuer keygen|sign`: a payer's tools for
// coverage credentials (docs/credentials.md).
//
//	healthagents issuer keygen --out FILE    write a new private key (0600), print the public key
//	healthagents issuer sign --key FILE      read coverage terms (JSON) on stdin, print the credential
func issuerCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: healthagents issuer keygen --out FILE | issuer sign --key FILE < terms.json")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("issuer "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch sub {
	case "keygen":
		out := fs.String("out", "", "file to write the private key to (64 hex digits, mode 0600); must not exist")
		if err := fs.Parse(args); err != nil {
			return flagErr(err)
		}
		if *out == "" {
			return errors.New("issuer keygen: --out FILE is required")
		}
		k, err := credential.GenerateKey()
		if err != nil {
			return err
		}
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("issuer keygen: %w", err)
		}
		if _, err := fmt.Fprintf(f, "%x\n", k[:]); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		pub, err := credential.ParsePublicKey(credential.PublicKeyHex(k))
		if err != nil {
			return err
		}
		h, err := credential.IssuerKeyHash(pub)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "public_key=%s\nissuer_key_hash=%s\n", credential.PublicKeyHex(k), h)
		return err
	case "sign":
		keyFile := fs.String("key", "", "the issuer's private key file (from issuer keygen)")
		if err := fs.Parse(args); err != nil {
			return flagErr(err)
		}
		if *keyFile == "" {
			return errors.New("issuer sign: --key FILE is required")
		}
		b, err := os.ReadFile(*keyFile)
		if err != nil {
			return fmt.Errorf("issuer sign: %w", err)
		}
		k, err := credential.ParsePrivateKey(string(b))
		if err != nil {
			return fmt.Errorf("issuer sign: %s: %w", *keyFile, err)
		}
		dec := json.NewDecoder(io.LimitReader(stdin, 1<<20))
		dec.DisallowUnknownFields()
		var terms credential.Terms
		if err := dec.Decode(&terms); err != nil {
			return fmt.Errorf("issuer sign: coverage terms on stdin: %w", err)
		}
		c, err := credential.Sign(k, terms)
		if err != nil {
			return fmt.Errorf("issuer sign: %w", err)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	default:
		return fmt.Errorf("unknown issuer command %q (keygen or sign)", sub)
	}
}

// flagErr turns -h into a clean exit (the flags were printed).
func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return fmt.Errorf("%s", strings.TrimSpace(err.Error()))
}

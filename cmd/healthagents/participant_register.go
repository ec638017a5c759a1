package main

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/healthagents/healthagents/client"
)

// registerOrganization registers the API key's organization when it has
// none registered: the round endpoint's 403 says so. It makes the
// organization's long-term X25519 key pair (unless state holds one already,
// from a registration that did not finish), keeps the private half in the
// state file (0600) before anything is sent, and registers the public half.
// An organization registered already, by this command or by hand, is left
// as it is. It reports whether it registered.
func registerOrganization(ctx context.Context, c *client.Client, state *participantState, statePath, name, endpoint string, stdout io.Writer) (bool, error) {
	_, err := c.FederatedRound(ctx)
	if !client.IsNotRegistered(err) {
		return false, nil // registered; any other trouble is the rounds' to meet
	}
	curve := ecdh.X25519()
	if state.PrivateKey == "" {
		k, err := curve.GenerateKey(rand.Reader)
		if err != nil {
			return false, fmt.Errorf("participant: making the organization's key: %w", err)
		}
		state.PrivateKey = hex.EncodeToString(k.Bytes())
		if err := state.save(statePath); err != nil {
			return false, err
		}
	}
	b, err := hex.DecodeString(state.PrivateKey)
	if err != nil {
		return false, fmt.Errorf("participant: state file %s: the organization's key is not hex", statePath)
	}
	k, err := curve.NewPrivateKey(b)
	if err != nil {
		return false, fmt.Errorf("participant: state file %s: the organization's key: %w", statePath, err)
	}
	if name == "" {
		name = state.Org
	}
	pub := hex.EncodeToString(k.PublicKey().Bytes())
	if _, err := c.RegisterFederatedOrganization(ctx, client.OrganizationRequest{OrganizationName: name, Endpoint: endpoint, EncryptionKey: pub}); err != nil {
		return false, fmt.Errorf("participant: registering organization %s: %w", state.Org, err)
	}
	fmt.Fprintf(stdout, "organization %s registered, X25519 public key %s (private key kept in %s)\n", state.Org, pub, statePath)
	return true, nil
}

// participantInit is `healthagents participant init`: it registers the
// organization of the API key (making its key pair) and does nothing
// else, for teams that provision before the data is there.
func participantInit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("participant init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "coordinator base URL (required)")
	apiKey := fs.String("api-key", getenv("HEALTHAGENTS_API_KEY"), "the organization's API key (default $HEALTHAGENTS_API_KEY)")
	org := fs.String("org", "", "the organization id (default: the API key's organization)")
	state := fs.String("state", "", "state file that keeps the organization's private key (default: the --data file's path + .participant.json)")
	data := fs.String("data", "", "the CSV (or records) file the participant will train on, naming the default state file")
	name := fs.String("name", "", "organization name for the directory (default: the organization id)")
	endpoint := fs.String("endpoint", "", "the organization's https:// URL for the directory (optional; the service never calls it)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("participant init: %w", err)
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("participant init: unexpected argument %q", fs.Arg(0))
	case *server == "":
		return errors.New("participant init: --server is required")
	case *apiKey == "":
		return errors.New("participant init: --api-key (or HEALTHAGENTS_API_KEY) is required")
	case *state == "" && *data == "":
		return errors.New("participant init: --state (or --data, which names it) is required")
	case *state == "":
		*state = *data + ".participant.json"
	}
	c, err := client.New(*server, client.WithAPIKey(*apiKey))
	if err != nil {
		return fmt.Errorf("participant init: %w", err)
	}
	id := *org
	if id == "" {
		st, err := c.FederatedTask(ctx)
		if err != nil {
			return fmt.Errorf("participant init: reading the server's task: %w", err)
		}
		id = st.OrganizationID
	}
	if id == "" {
		return errors.New("participant init: the API key has no organization; pass --org")
	}
	s, err := loadParticipantState(*state)
	if err != nil {
		return err
	}
	if s == nil {
		s = &participantState{Org: id, LastRound: -1}
	} else if s.Org != id {
		return fmt.Errorf("participant init: state file %s is for organization %q; pass another --state", *state, s.Org)
	}
	done, err := registerOrganization(ctx, c, s, *state, *name, *endpoint, stdout)
	if err != nil {
		return err
	}
	if !done {
		fmt.Fprintf(stdout, "organization %s is registered already; nothing to do\n", id)
		return nil
	}
	if _, err := os.Stat(*state); err != nil {
		return s.save(*state)
	}
	return nil
}

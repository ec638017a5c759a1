// Command federated trains the diagnosis model across three hospitals over
// HTTP. Each hospital is a federated.Participant in this process holding its
// own synthetic cohort (a general hospital, a diabetes clinic and a young
// urban practice, from federated/synth); it talks to the coordinator only
// through the Go SDK (client.FederatedRoundAPI): public keys, sealed shares,
// a masked update and the shares that unmask the sum. Records never leave
// the hospital. After every round it prints the global model's accuracy on
// held-out records no hospital trained on.
//
// By default it starts a coordinator itself, on a real listener on
// 127.0.0.1 with a SQLite database in a temporary directory, and mints one
// API key per hospital. Differential privacy is OFF by default in this demo
// (-epsilon sets a budget for the whole run instead; see
// docs/federated-privacy.md for what the default epsilon 0.1 costs):
//
//	go run ./examples/federated
//	go run ./examples/federated -rounds 8 -epsilon 50
//
// Against a running server, give its URL and a federated-scope API key
// bound to each hospital's organization:
//
//	go run ./examples/federated -url http://localhost:8000 \
//	    -keys hospital-a=sk_dev_...,hospital-b=sk_dev_...,hospital-c=sk_dev_...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "federated:", err)
		os.Exit(1)
	}
}

var hospitalNames = []string{"hospital-a", "hospital-b", "hospital-c"}

// run parses args, starts a coordinator unless -url names one, and trains.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("federated", flag.ContinueOnError)
	fs.SetOutput(stdout)
	url := fs.String("url", "", "a running server's base URL (default: start one on 127.0.0.1)")
	keyList := fs.String("keys", "", "with -url: hospital-a=KEY,hospital-b=KEY,hospital-c=KEY (federated scope, bound to the organization)")
	rounds := fs.Int("rounds", 5, "rounds to run")
	size := fs.Int("records", 400, "records per hospital")
	epsilon := fs.Float64("epsilon", 0, "embedded server only: DP budget epsilon for the whole run (delta 1e-5); 0 turns DP off")
	poll := fs.Duration("poll", 100*time.Millisecond, "how often a hospital looks at the round")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rounds < 1 || *size < 20 {
		return errors.New("-rounds must be at least 1 and -records at least 20")
	}
	keys := map[string]string{}
	if *url == "" {
		base, hospitalKeys, stopServer, err := startServer(ctx, *rounds, *epsilon)
		if err != nil {
			return err
		}
		defer stopServer()
		*url, keys = base, hospitalKeys
		if *epsilon > 0 {
			fmt.Fprintf(stdout, "coordinator at %s (differential privacy ON: epsilon %g, delta 1e-5 over %d rounds)\n", base, *epsilon, *rounds)
		} else {
			fmt.Fprintf(stdout, "coordinator at %s (differential privacy OFF for this demo; the service default is epsilon 0.1)\n", base)
		}
	} else {
		for _, kv := range strings.Split(*keyList, ",") {
			if org, key, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
				keys[org] = key
			}
		}
		fmt.Fprintf(stdout, "coordinator at %s\n", *url)
	}
	return train(ctx, stdout, *url, keys, *rounds, *size, *poll)
}

// hospital is one organization: its SDK client and its participant.
type hospital struct {
	org string
	c   *client.Client
	p   *federated.Participant
}

func train(ctx context.Context, stdout io.Writer, url string, keys map[string]string, rounds, size int, poll time.Duration) error {
	var hs []*hospital
	for i, cohort := range synth.ThreeCohorts(size, 42) {
		org := hospitalNames[i]
		if keys[org] == "" {
			return fmt.Errorf("no API key for %s", org)
		}
		c, err := client.New(url, client.WithAPIKey(keys[org]))
		if err != nil {
			return err
		}
		if _, err := c.RegisterFederatedOrganization(ctx, client.OrganizationRequest{
			OrganizationName: cohort.Name, Endpoint: "https://" + org + ".example.org/federated", EncryptionKey: demoKey(i),
		}); err != nil {
			return fmt.Errorf("registering %s: %w", org, err)
		}
		p, err := federated.NewParticipant(federated.ParticipantConfig{Org: org}, synth.Records(cohort))
		if err != nil {
			return err
		}
		hs = append(hs, &hospital{org: org, c: c, p: p})
		fmt.Fprintf(stdout, "%s: %d %s records, kept in the hospital\n", org, cohort.Size, cohort.Name)
	}
	m, err := hs[0].c.FederatedModel(ctx)
	if err != nil {
		return err
	}
	acc, n, err := heldOutAccuracy(hs, m)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "model %s (before training): held-out accuracy %.3f on %d records\n", m.ModelVersion, acc, n)
	for range rounds {
		errs := make([]error, len(hs))
		var wg sync.WaitGroup
		for i, h := range hs {
			wg.Go(func() {
				_, err := h.p.RunRound(ctx, h.c.FederatedRoundAPI(h.org), poll)
				if !errors.Is(err, federated.ErrNoOpenRound) { // after the last round, none opens
					errs[i] = err
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		m, err := hs[0].c.FederatedModel(ctx)
		if err != nil {
			return err
		}
		acc, n, err := heldOutAccuracy(hs, m)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "round %d closed: model %s from %d hospitals, held-out accuracy %.3f on %d records",
			m.TrainingRound, m.ModelVersion, m.OrganizationsContributed, acc, n)
		if m.Accuracy != nil {
			fmt.Fprintf(stdout, " (coordinator, through the secure sum: %s scored %.3f)", m.AccuracyModelVersion, *m.Accuracy)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// heldOutAccuracy scores the global model on the hospitals' held-out
// records (each hospital scores its own; only the counts are added up).
// The coordinator reports the same figure one round later, through the
// secure sum (GET /api/v1/federated/model, accuracy).
func heldOutAccuracy(hs []*hospital, m *client.GlobalModel) (float64, int, error) {
	w, err := client.DecodeWeights(m)
	if err != nil {
		return 0, 0, err
	}
	var correct, total int
	for _, h := range hs {
		e, err := h.p.Evaluate(w)
		if err != nil {
			return 0, 0, err
		}
		correct, total = correct+e.Correct, total+e.Total
	}
	if total == 0 {
		return 0, 0, errors.New("no held-out records")
	}
	return float64(correct) / float64(total), total, nil
}

// demoKey is a fixed X25519 public key per hospital for the directory
// entry (a deployment registers its own long-term key).
func demoKey(i int) string {
	return fmt.Sprintf("%02x", []byte{byte(9 + i), 0x5a}) + strings.Repeat("42", 30)
}

// startServer runs the service's federated endpoints on a real listener:
// SQLite in a temporary directory, a key service with one key per hospital.
func startServer(ctx context.Context, rounds int, epsilon float64) (url string, keys map[string]string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "healthagents-federated-*")
	if err != nil {
		return "", nil, nil, err
	}
	var closers []func()
	stop = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	db, err := store.Open(ctx, filepath.Join(dir, "healthagents.db"))
	if err != nil {
		return "", nil, nil, err
	}
	closers = append(closers, func() { db.Close() })
	ks, err := store.NewKeyStore(db)
	if err != nil {
		return "", nil, nil, err
	}
	keySvc, err := apikey.New(ks)
	if err != nil {
		return "", nil, nil, err
	}
	closers = append(closers, func() { keySvc.Close(context.Background()) })
	keys = map[string]string{}
	for _, org := range hospitalNames {
		raw, _, err := keySvc.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeFederated}, Organization: org, Name: org + " (example)"})
		if err != nil {
			return "", nil, nil, err
		}
		keys[org] = raw
	}
	cfg := federated.Config{MaxRounds: max(rounds, 1), RoundTimeout: 10 * time.Minute}
	if epsilon > 0 {
		cfg.Privacy = &federated.PrivacyConfig{Budget: dp.Budget{Epsilon: epsilon, Delta: 1e-5}}
	} else {
		cfg.DisablePrivacy = true
	}
	fed, err := app.OpenFederated(ctx, db, cfg, nil)
	if err != nil {
		return "", nil, nil, err
	}
	closers = append(closers, func() { fed.Close() })
	fk, err := cipher.GenerateKey()
	if err != nil {
		return "", nil, nil, err
	}
	kr, err := cipher.ParseKeyring(fk)
	if err != nil {
		return "", nil, nil, err
	}
	svc, err := healthagents.New(kr)
	if err != nil {
		return "", nil, nil, err
	}
	h, err := server.New(server.Deps{Service: svc, Keys: keySvc, FederatedAPI: fed.API, Federated: fed.API})
	if err != nil {
		return "", nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	closers = append(closers, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	})
	return "http://" + ln.Addr().String(), keys, stop, nil
}

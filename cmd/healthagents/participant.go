package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	gnarklog "github.com/consensys/gnark/logger"
	"golang.org/x/time/rate"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/record"
)

// participantOptions are the flags of `healthagents participant`.
type participantOptions struct {
	server, apiKey, org, data, task, taskFile, state string
	fhirLabel, records, keyFile, name, endpoint      string
	poll, wait                                       time.Duration
	rounds, rate, burst                              int
	maxUnusable                                      float64 // percent
}

func parseParticipant(args []string, getenv func(string) string, stderr io.Writer) (participantOptions, error) {
	var o participantOptions
	fs := flag.NewFlagSet("participant", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.server, "server", "", "coordinator base URL (required)")
	fs.StringVar(&o.apiKey, "api-key", getenv("HEALTHAGENTS_API_KEY"), "the organization's API key (default $HEALTHAGENTS_API_KEY)")
	fs.StringVar(&o.data, "data", "", "CSV file with the task's columns (required)")
	fs.StringVar(&o.records, "records", "", "instead of --data: encrypted patient records, one PatientData envelope (the JSON the service accepts) per line, opened with --key-file in this process only")
	fs.StringVar(&o.keyFile, "key-file", "", "with --records: file holding the Fernet key (FERNET_KEY's format; several comma separated) that opens the envelopes; it never leaves this process")
	fs.StringVar(&o.fhirLabel, "fhir-label", "", "read --data as FHIR R4 NDJSON, one Bundle per patient (a bulk export), the label being a Condition or Observation coded SYSTEM|CODE, e.g. http://hl7.org/fhir/sid/icd-10-cm|E11 (docs/decisions/fhir.md)")
	fs.StringVar(&o.task, "task", "", "the task id to train, one of the server's tasks (default: the server's default task)")
	fs.StringVar(&o.taskFile, "task-file", "", "a local copy of the task file, checked against the server's (default: the server's definition)")
	fs.StringVar(&o.org, "org", "", "the organization id (default: the API key's organization)")
	fs.StringVar(&o.state, "state", "", "state file kept between restarts (default: the data file's path + .participant.json)")
	fs.DurationVar(&o.poll, "poll", 2*time.Second, "least time between two looks at the round (at least 1s)")
	fs.DurationVar(&o.wait, "wait", 20*time.Second, "long poll: how long the server may hold a look while there is nothing to do (0 to 25s; 0 polls)")
	fs.IntVar(&o.rounds, "rounds", 0, "stop after contributing to this many rounds' models in all (0: until the task ends)")
	fs.IntVar(&o.rate, "rate", 60, "most requests a minute this participant makes (the free tier allows 100)")
	fs.IntVar(&o.burst, "burst", 5, "requests it may make back to back before --rate spaces them (1 to --rate; the key's tier allows a burst of its per-minute figure)")
	fs.StringVar(&o.name, "name", "", "when it registers the organization: its name for the directory (default: the organization id)")
	fs.StringVar(&o.endpoint, "endpoint", "", "when it registers the organization: its https:// URL for the directory (optional; the service never calls it)")
	fs.Float64Var(&o.maxUnusable, "max-unusable", 100*federated.DefaultMaxUnusable, "with a CSV --data: refuse to start when more than this percentage of its rows cannot be used (a label value the task does not know; an empty cell when the task file says missing: refuse)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("participant: %w", err)
	}
	switch {
	case o.server == "":
		return o, errors.New("participant: --server is required")
	case !(o.maxUnusable >= 0 && o.maxUnusable <= 100):
		return o, errors.New("participant: --max-unusable is a percentage, 0 to 100")
	case o.apiKey == "":
		return o, errors.New("participant: --api-key (or HEALTHAGENTS_API_KEY) is required")
	case o.data == "" && o.records == "":
		return o, errors.New("participant: --data (or --records with --key-file) is required")
	case o.data != "" && o.records != "":
		return o, errors.New("participant: give --data or --records, not both")
	case o.records != "" && o.keyFile == "":
		return o, errors.New("participant: --records needs --key-file")
	case o.keyFile != "" && o.records == "":
		return o, errors.New("participant: --key-file goes with --records")
	case o.records != "" && o.fhirLabel != "":
		return o, errors.New("participant: --fhir-label reads --data; --records holds envelopes")
	case o.poll < time.Second:
		return o, errors.New("participant: --poll must be at least 1s")
	case o.wait < 0 || o.wait > 25*time.Second:
		return o, errors.New("participant: --wait must be from 0 to 25s")
	case o.rounds < 0:
		return o, errors.New("participant: --rounds must not be negative")
	case o.rate < 10:
		return o, errors.New("participant: --rate must be at least 10 requests a minute")
	case o.burst < 1 || o.burst > o.rate:
		return o, errors.New("participant: --burst must be from 1 to --rate")
	}
	input := o.data
	if o.records != "" {
		input = o.records
		if _, err := os.Stat(o.keyFile); err != nil {
			return o, fmt.Errorf("participant: --key-file: %w", err)
		}
	}
	if o.state == "" {
		o.state = input + ".participant.json"
	}
	if _, err := os.Stat(input); err != nil {
		return o, fmt.Errorf("participant: data: %w", err)
	}
	return o, nil
}

// participantTask is the task to train: the local --task-file, or the
// definition the server publishes, or the built-in diagnosis task when the
// server runs that. It must hash to the server's task hash.
func participantTask(o participantOptions, st *client.FederatedTask) (*federated.TaskFile, error) {
	var tf *federated.TaskFile
	var err error
	switch {
	case o.taskFile != "":
		f, ferr := os.Open(o.taskFile)
		if ferr != nil {
			return nil, fmt.Errorf("participant: task file: %w", ferr)
		}
		defer f.Close()
		tf, err = federated.ParseTaskFile(f)
	case st.Definition != nil:
		b, merr := json.Marshal(st.Definition)
		if merr != nil {
			return nil, merr
		}
		tf, err = federated.ParseTaskFileBytes(b)
	default:
		tf, err = builtinTaskFile()
	}
	if err != nil {
		return nil, fmt.Errorf("participant: %w", err)
	}
	if h := tf.Task().Hash(); h != st.TaskHash {
		return nil, fmt.Errorf("participant: the task (hash %.12s…) is not the server's task %q (hash %.12s…); check --task-file", h, st.ID, st.TaskHash)
	}
	return tf, nil
}

// builtinTaskFile describes the built-in diagnosis task as a task file (CSV
// columns named as its features, label column "diagnosis").
func builtinTaskFile() (*federated.TaskFile, error) {
	t := federated.DefaultTask()
	tf := &federated.TaskFile{
		ID: t.Name, Label: federated.LabelSpec{Positive: t.Labels.Positive, Negative: t.Labels.Negative},
		Model: t.Model, LearningRate: t.Training.LearningRate, LocalEpochs: t.Training.Epochs,
		BatchSize: t.Training.BatchSize, ReferenceDate: t.ReferenceDate, ClampZ: t.ClampZ,
	}
	for _, f := range t.Features {
		tf.Features = append(tf.Features, federated.FeatureSpec{Name: f.Name, Mean: f.Mean, Scale: f.Scale})
	}
	return tf, tf.Validate()
}

// participate is `healthagents participant`: a hospital's side of federated
// training over HTTP. It learns the task from the server (or --task-file),
// reads its records from a CSV file, joins every round until the task ends
// (maximum rounds or privacy budget) or --rounds, and prints one progress
// line per round. What it sends is public keys, sealed shares, a masked
// vector and revealed shares; records and its unmasked update never leave
// the process. It keeps a state file: after a restart it checks it trains
// the same task as the same organization and joins the next round (a round
// in progress needs the secrets the previous process held in memory).
func participate(ctx context.Context, args []string, getenv func(string) string, logger *slog.Logger, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "init" {
		return participantInit(ctx, args[1:], getenv, stdout, stderr)
	}
	o, err := parseParticipant(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the flags were printed
	}
	if err != nil {
		return err
	}
	paced := &http.Client{Transport: &pacedTransport{next: http.DefaultTransport, lim: rate.NewLimiter(rate.Every(time.Minute/time.Duration(o.rate)), o.burst)}}
	c, err := client.New(o.server, client.WithAPIKey(o.apiKey), client.WithLogger(logger), client.WithHTTPClient(paced))
	if err != nil {
		return fmt.Errorf("participant: %w", err)
	}
	if o.task != "" {
		// Every call goes to the task's own endpoints
		// (/api/v1/federated/tasks/{task}/...): its rounds, model and budget.
		c = c.ForFederatedTask(o.task)
	}
	st, err := c.FederatedTask(ctx)
	var ce *client.Error
	if o.task != "" && errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound {
		return fmt.Errorf("participant: the server runs no task %q (GET /api/v1/federated/tasks lists them)", o.task)
	}
	if err != nil {
		return fmt.Errorf("participant: reading the server's task: %w", err)
	}
	org := o.org
	if org == "" {
		org = st.OrganizationID
	}
	if org == "" {
		return errors.New("participant: the API key has no organization; pass --org")
	}
	tf, err := participantTask(o, st)
	if err != nil {
		return err
	}
	state, err := loadParticipantState(o.state)
	if err != nil {
		return err
	}
	switch {
	case state == nil:
		state = &participantState{Org: org, TaskID: st.ID, TaskHash: st.TaskHash, LastRound: -1}
	case state.Org == org && state.TaskHash == "":
		// Written by `participant init`: the organization's key, no task yet.
		state.TaskID, state.TaskHash = st.ID, st.TaskHash
	case state.Org != org || state.TaskHash != st.TaskHash:
		return fmt.Errorf("participant: state file %s is for organization %q and task %q; pass another --state", o.state, state.Org, state.TaskID)
	case state.LearnedScaling != nil && st.LearnedScaling != nil && !slices.Equal(state.LearnedScaling, st.LearnedScaling):
		return fmt.Errorf("participant: the server's learned scaling differs from the one state file %s recorded; pass another --state", o.state)
	default:
		left := ""
		if state.RoundsLeftOut > 0 {
			left = fmt.Sprintf(", %d left out", state.RoundsLeftOut)
		}
		fmt.Fprintf(stdout, "resuming: %d rounds joined%s, last round %d (model %s)\n", state.RoundsJoined, left, state.LastRound, state.ModelVersion)
	}
	if _, err := registerOrganization(ctx, c, state, o.state, o.name, o.endpoint, stdout); err != nil {
		return err
	}
	read := func(tf *federated.TaskFile, path string) ([]*record.Record, error) {
		return readParticipantCSV(tf, path, o.maxUnusable/100, stdout)
	}
	switch {
	case o.fhirLabel != "":
		read = func(tf *federated.TaskFile, path string) ([]*record.Record, error) {
			return readParticipantFHIR(tf, path, o.fhirLabel)
		}
	case o.records != "":
		kr, err := loadKeyFile(o.keyFile)
		if err != nil {
			return err
		}
		read = func(_ *federated.TaskFile, path string) ([]*record.Record, error) {
			recs, rep, err := readParticipantRecords(ctx, path, kr)
			if err == nil {
				fmt.Fprintln(stdout, rep)
			}
			return recs, err
		}
	}
	input := o.data
	if o.records != "" {
		input = o.records
	}
	recs, err := read(tf, input)
	if err != nil {
		return err
	}
	pcfg := federated.ParticipantConfig{Org: org, Task: tf.Task(), HeldOut: tf.HeldOut, Logger: logger}
	if st.Proofs {
		gnarklog.Disable() // gnark's own progress lines would interleave with ours
		// Proved rounds: prove each update with the coordinator's keys of
		// the round's shape, fetched once per shape.
		var opts []normproof.Option
		known, err := harnessedKnownKeys(getenv, logger)
		if err != nil {
			return fmt.Errorf("participant: %w", err)
		}
		if known != nil {
			opts = append(opts, normproof.WithKnownKeys(known))
		}
		svc := normproof.NewServiceFetching(func(s normproof.Shape) ([]byte, []byte, error) {
			fmt.Fprintf(stdout, "fetching the proving key of shape %s\n", s.Name())
			// The coordinator's first setup of a shape takes seconds (more on a
			// busy machine): allow it longer than an ordinary call.
			return c.With(client.WithTimeout(5*time.Minute)).FederatedProofKeys(ctx, s.Name())
		}, opts...)
		_, pp := svc.ProofGroup()
		pcfg.Proofs = &pp
		prefetchProofKeys(ctx, c, svc, st, logger)
	}
	p, err := federated.NewParticipant(pcfg, recs)
	if err != nil {
		return fmt.Errorf("participant: %w", err)
	}
	api := c.FederatedRoundAPI(org)
	if o.wait > 0 {
		api = c.FederatedRoundAPILongPoll(org, o.wait)
	}
	noise := ""
	switch st.Privacy.Noise {
	case federated.NoiseDistributed:
		noise = ", DP noise distributed (this participant adds its share before masking)"
	case federated.NoiseCentral:
		noise = ", DP noise central"
	}
	fmt.Fprintf(stdout, "participant %s: %d records, task %s, round %d, phase %s, proved rounds %v%s\n", org, len(recs), st.ID, st.CurrentRound, st.Phase, st.Proofs, noise)
	failures := 0
	for o.rounds == 0 || state.RoundsJoined < o.rounds {
		v, err := p.RunRound(ctx, api, o.poll)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, federated.ErrNoOpenRound) || isNoOpenRound(err):
			fmt.Fprintln(stdout, "no round is open: the task has ended (maximum rounds or privacy budget)")
			reportFinal(ctx, c, p, stdout)
			return nil
		case errors.Is(err, federated.ErrTaskMismatch):
			return fmt.Errorf("participant: %w (check --task-file)", err)
		case err != nil:
			failures++
			logger.LogAttrs(ctx, slog.LevelWarn, "federated round failed; retrying", slog.String("error", err.Error()), slog.Int("failures", failures))
			if failures >= 20 {
				return fmt.Errorf("participant: 20 attempts in a row failed, last: %w", err)
			}
			if err := sleepCtx(ctx, o.poll*time.Duration(min(failures, 30))); err != nil {
				return err
			}
			continue
		}
		failures = 0
		m, counted := reportRound(ctx, c, p, v, st.Privacy, stdout)
		closed := v.Round - 1
		if counted {
			state.RoundsJoined++
		} else {
			// Refused (a proved round), too late, or a round that closed
			// without a model: it does not count towards --rounds.
			state.RoundsLeftOut++
		}
		state.LastRound = closed
		if m != nil {
			state.ModelVersion = m.ModelVersion
			if m.Scaling != nil {
				state.LearnedScaling = m.Scaling
			}
		}
		if err := state.save(o.state); err != nil {
			return err
		}
	}
	return nil
}

// pacedTransport keeps a participant within its key's rate class: every
// request waits for the limiter (--rate a minute, --burst back to back),
// so however fast rounds go the command never earns a 429.
type pacedTransport struct {
	next http.RoundTripper
	lim  *rate.Limiter
}

func (t *pacedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.lim.Wait(r.Context()); err != nil {
		return nil, err
	}
	return t.next.RoundTrip(r)
}

func isNoOpenRound(err error) bool {
	var e *client.Error
	return errors.As(err, &e) && e.V1Code == "NO_OPEN_ROUND"
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reportRound prints one line for the round that ended before next: the
// model it produced, its accuracy on this participant's own held-out
// records, the pooled figure and the privacy budget spent; or that it was
// abandoned and why; and whether this organization's update is in it. It
// reports whether the round counts towards --rounds.
func reportRound(ctx context.Context, c *client.Client, p *federated.Participant, next *federated.RoundView, priv client.FederatedPrivacy, stdout io.Writer) (*client.GlobalModel, bool) {
	ended := next.Round - 1
	tail := fmt.Sprintf("; next round %d, phase %s", next.Round, next.Phase)
	if e := next.Previous; e != nil && e.Round == ended && e.Outcome == "abandoned" {
		fmt.Fprintf(stdout, "round %d abandoned: %s; not counted%s\n", ended, e.Reason, tail)
		return nil, false
	}
	m, err := c.FederatedModel(ctx)
	if err != nil {
		fmt.Fprintf(stdout, "round %d ended; model unavailable (%v); not counted%s\n", ended, err, tail)
		return nil, false
	}
	if m.TrainingRound != ended {
		fmt.Fprintf(stdout, "round %d ended without a model (abandoned, or lost to a coordinator restart); not counted%s\n", ended, tail)
		return m, false
	}
	counted := p.Contributed(ended)
	if !counted {
		tail = "; this organization's update is not in it (refused or too late), not counted" + tail
	}
	if p.RoundKind() == federated.RoundStatistics && m.Scaling != nil {
		// The statistics round: no training, the scaling is learned.
		fmt.Fprintf(stdout, "round %d closed: statistics round, scaling of %d learned features from %d organizations (model %s)%s\n",
			ended, len(m.Scaling), m.OrganizationsContributed, m.ModelVersion, tail)
		return m, counted
	}
	line := fmt.Sprintf("round %d closed: model %s from %d organizations", ended, m.ModelVersion, m.OrganizationsContributed)
	if w, err := client.DecodeWeights(m); err == nil {
		if ev, err := p.Evaluate(w); err == nil && ev.Total > 0 {
			line += fmt.Sprintf(", local held-out accuracy %.3f (%d records)", ev.Accuracy(), ev.Total)
		}
	}
	if m.Accuracy != nil {
		line += fmt.Sprintf(", pooled accuracy of %s %.3f", m.AccuracyModelVersion, *m.Accuracy)
		if m.MeanAccuracy != nil && m.AccuracyStdDev != nil {
			line += fmt.Sprintf(" (per organization %.3f ± %.3f over %d)", *m.MeanAccuracy, *m.AccuracyStdDev, m.EvalParticipants)
		}
	}
	if priv.Enabled {
		line += fmt.Sprintf(", epsilon spent %.4g of %.4g", m.EpsilonSpent, priv.Epsilon)
	}
	fmt.Fprintf(stdout, "%s%s\n", line, tail)
	return m, counted
}

// reportFinal prints the final model and its accuracy on this
// participant's own held-out records.
func reportFinal(ctx context.Context, c *client.Client, p *federated.Participant, stdout io.Writer) {
	m, err := c.FederatedModel(ctx)
	if err != nil {
		return
	}
	line := fmt.Sprintf("final model %s (round %d, %d organizations)", m.ModelVersion, m.TrainingRound, m.OrganizationsContributed)
	if w, err := client.DecodeWeights(m); err == nil {
		if ev, err := p.Evaluate(w); err == nil && ev.Total > 0 {
			line += fmt.Sprintf(", local held-out accuracy %.3f (%d records)", ev.Accuracy(), ev.Total)
		}
	}
	if m.Accuracy != nil && m.AccuracyModelVersion == m.ModelVersion {
		// The evaluation round after the last training round measured it.
		line += fmt.Sprintf(", pooled held-out accuracy %.3f (%d records)", *m.Accuracy, m.EvalSamples)
	}
	fmt.Fprintln(stdout, line)
}

// readParticipantCSV reads the CSV at path and prints, before any round,
// what it read, used and skipped and why (federated.CSVReport); it refuses
// the data as CSVReport.Check does, with maxUnusable (a share) of the rows
// allowed to be left out.
func readParticipantCSV(tf *federated.TaskFile, path string, maxUnusable float64, stdout io.Writer) ([]*record.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("participant: data: %w", err)
	}
	defer f.Close()
	recs, rep, err := tf.ReadCSVReport(f)
	if err != nil {
		return nil, fmt.Errorf("participant: %s: %w", path, err)
	}
	if err := rep.Check(maxUnusable); err != nil {
		return nil, fmt.Errorf("participant: %s: %s", path, strings.TrimPrefix(err.Error(), federated.ErrTask.Error()+": "))
	}
	fmt.Fprintln(stdout, rep)
	return recs, nil
}

// readParticipantFHIR reads the records from FHIR R4 NDJSON, one Bundle
// per patient; the label is the Condition or Observation coded label
// (SYSTEM|CODE), named as the task's labels.
func readParticipantFHIR(tf *federated.TaskFile, path, label string) ([]*record.Record, error) {
	l, err := fhir.ParseLabel(label, tf.Label.Positive, tf.Label.Negative)
	if err != nil {
		return nil, fmt.Errorf("participant: --fhir-label: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("participant: data: %w", err)
	}
	defer f.Close()
	recs, err := fhir.ReadNDJSON(f, fhir.Options{Label: l})
	if err != nil {
		return nil, fmt.Errorf("participant: %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("participant: %s has no records", path)
	}
	return recs, nil
}

// prefetchProofKeys fetches, before the first round needs it, the proving
// key of the shape the task's rounds will most likely have (its target
// number of organizations), so that a round's masked-input phase is spent
// proving, not downloading. A miss only means the key is fetched when a
// round needs it.
func prefetchProofKeys(ctx context.Context, c *client.Client, svc *normproof.Service, st *client.FederatedTask, logger *slog.Logger) {
	v, err := c.FederatedRound(ctx)
	if err != nil || v.Kind != "" || v.Dim <= federated.EvalWords {
		return // no round, or a statistics or evaluation round: the next look will do
	}
	bits, err := normproof.WeightBits(v.ClipNorm, v.FracBits)
	if err != nil {
		return
	}
	orgs := max(st.TargetParticipants, st.MinParticipants, 3)
	s := normproof.Shape{Weights: v.Dim - federated.EvalWords, Extra: federated.EvalWords, Peers: orgs - 1, Bits: bits}
	if _, err := svc.Keys(s); err != nil {
		logger.LogAttrs(ctx, slog.LevelWarn, "proving key not fetched ahead; a round will fetch it", slog.String("shape", s.Name()), slog.String("error", err.Error()))
	}
}

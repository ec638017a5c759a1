package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/record"
)

// participantOptions are the flags of `healthagents participant`.
type participantOptions struct {
	server, apiKey, org, data, task string
	poll                            time.Duration
	rounds                          int
}

func parseParticipant(args []string, getenv func(string) string, stderr io.Writer) (participantOptions, error) {
	var o participantOptions
	fs := flag.NewFlagSet("participant", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.server, "server", "", "coordinator base URL (required)")
	fs.StringVar(&o.apiKey, "api-key", getenv("HEALTHAGENTS_API_KEY"), "the organization's API key (default $HEALTHAGENTS_API_KEY)")
	fs.StringVar(&o.org, "org", "", "the organization id of the API key (required)")
	fs.StringVar(&o.data, "data", "", "CSV file with the task's columns (required)")
	fs.StringVar(&o.task, "task", "", "task file (JSON); default: the built-in diagnosis task, CSV columns named as its features")
	fs.DurationVar(&o.poll, "poll", 2*time.Second, "how often to ask for the round's state (at least 1s)")
	fs.IntVar(&o.rounds, "rounds", 0, "stop after this many rounds (0: until the task ends)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("participant: %w", err)
	}
	switch {
	case o.server == "":
		return o, errors.New("participant: --server is required")
	case o.apiKey == "":
		return o, errors.New("participant: --api-key (or HEALTHAGENTS_API_KEY) is required")
	case o.org == "":
		return o, errors.New("participant: --org is required")
	case o.data == "":
		return o, errors.New("participant: --data is required")
	case o.poll < time.Second:
		return o, errors.New("participant: --poll must be at least 1s")
	case o.rounds < 0:
		return o, errors.New("participant: --rounds must not be negative")
	}
	return o, nil
}

// loadParticipantTask reads the task file, or describes the built-in task
// as one (CSV columns named as its features, label column "diagnosis").
func loadParticipantTask(path string) (*federated.TaskFile, error) {
	if path == "" {
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
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("participant: task file: %w", err)
	}
	defer f.Close()
	return federated.ParseTaskFile(f)
}

// participate is `healthagents participant`: a hospital's side of federated
// training over HTTP. It reads its records from a CSV file, joins every round
// until the task ends (or --rounds), and prints one progress line per round.
// What it sends is public keys, sealed shares, a masked vector and revealed
// shares; records and its unmasked update never leave the process. After a
// restart it joins the next round (a round in progress needs the secrets
// the previous process held).
func participate(ctx context.Context, args []string, getenv func(string) string, logger *slog.Logger, stdout, stderr io.Writer) error {
	o, err := parseParticipant(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the flags were printed
	}
	if err != nil {
		return err
	}
	tf, err := loadParticipantTask(o.task)
	if err != nil {
		return err
	}
	recs, err := readParticipantCSV(tf, o.data)
	if err != nil {
		return err
	}
	p, err := federated.NewParticipant(federated.ParticipantConfig{Org: o.org, Task: tf.Task(), HeldOut: tf.HeldOut, Logger: logger}, recs)
	if err != nil {
		return fmt.Errorf("participant: %w", err)
	}
	c, err := client.New(o.server, client.WithAPIKey(o.apiKey), client.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("participant: %w", err)
	}
	api := c.FederatedRoundAPI(o.org)
	fmt.Fprintf(stdout, "participant %s: %d records, task %s\n", o.org, len(recs), tf.ID)
	failures := 0
	for done := 0; o.rounds == 0 || done < o.rounds; {
		v, err := p.RunRound(ctx, api, o.poll)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, federated.ErrNoOpenRound) || isNoOpenRound(err):
			fmt.Fprintln(stdout, "no round is open: the task has ended (maximum rounds or privacy budget)")
			return nil
		case errors.Is(err, federated.ErrTaskMismatch):
			return fmt.Errorf("participant: %w (check --task)", err)
		case err != nil:
			failures++
			logger.LogAttrs(ctx, slog.LevelWarn, "federated round failed", slog.String("error", err.Error()), slog.Int("failures", failures))
			if failures >= 20 {
				return fmt.Errorf("participant: 20 rounds in a row failed, last: %w", err)
			}
			if err := sleepCtx(ctx, o.poll*time.Duration(min(failures, 30))); err != nil {
				return err
			}
			continue
		}
		failures = 0
		done++
		reportRound(ctx, c, p, v, stdout)
	}
	return nil
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

// reportRound prints the model the finished round produced and its accuracy
// on this participant's own held-out records.
func reportRound(ctx context.Context, c *client.Client, p *federated.Participant, next *federated.RoundView, stdout io.Writer) {
	m, err := c.FederatedModel(ctx)
	if err != nil {
		fmt.Fprintf(stdout, "round done; next round %d (model unavailable: %v)\n", next.Round, err)
		return
	}
	line := fmt.Sprintf("round %d closed: model %s from %d organizations", m.TrainingRound, m.ModelVersion, m.OrganizationsContributed)
	if w, err := client.DecodeWeights(m); err == nil {
		if ev, err := p.Evaluate(w); err == nil && ev.Total > 0 {
			line += fmt.Sprintf(", local held-out accuracy %.3f (%d records)", ev.Accuracy(), ev.Total)
		}
	}
	if m.Accuracy != nil {
		line += fmt.Sprintf(", pooled accuracy of %s %.3f", m.AccuracyModelVersion, *m.Accuracy)
	}
	if m.EpsilonSpent > 0 {
		line += fmt.Sprintf(", epsilon spent %.4g", m.EpsilonSpent)
	}
	fmt.Fprintf(stdout, "%s; next round %d, phase %s\n", line, next.Round, next.Phase)
}

func readParticipantCSV(tf *federated.TaskFile, path string) ([]*record.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("participant: data: %w", err)
	}
	defer f.Close()
	recs, err := tf.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("participant: %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("participant: %s has no records", path)
	}
	return recs, nil
}

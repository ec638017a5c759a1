package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
)

// modelCommand is `healthagents model export --server URL --api-key KEY
// [--task ID] [--format onnx|json] [--out FILE]`: it fetches the latest
// global model of a running coordinator (GET /api/v1/federated/model) and
// writes it to FILE (- for standard output): as a self-contained ONNX model
// (raw feature values in, class probabilities out), or as the JSON answer
// (the weights as numbers, the features' scaling, the classes).
func modelCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		return errors.New("usage: healthagents model export --server URL --api-key KEY [--task ID] [--format onnx|json] [--out FILE]")
	}
	fs := flag.NewFlagSet("model export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", getenv("HEALTHAGENTS_URL"), "the coordinator's base URL (default $HEALTHAGENTS_URL)")
	apiKey := fs.String("api-key", getenv("HEALTHAGENTS_API_KEY"), "an API key with the federated scope (default $HEALTHAGENTS_API_KEY)")
	task := fs.String("task", "", "the task whose model to export (default: the server's default task)")
	format := fs.String("format", "onnx", "onnx (a model file onnxruntime and other ONNX runtimes load) or json (the model answer)")
	out := fs.String("out", "", "where to write it; - for standard output (default: <task>-<version>.onnx or .json in the current directory)")
	timeout := fs.Duration("timeout", time.Minute, "deadline of the whole call, retries included")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("model export: %w", err)
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("model export: unexpected argument %q", fs.Arg(0))
	case *server == "":
		return errors.New("model export: --server (or HEALTHAGENTS_URL) is required")
	case *apiKey == "":
		return errors.New("model export: --api-key (or HEALTHAGENTS_API_KEY) is required")
	case *format != "onnx" && *format != "json":
		return fmt.Errorf("model export: --format must be onnx or json, not %q", *format)
	}
	c, err := client.New(*server, client.WithAPIKey(*apiKey), client.WithTimeout(*timeout))
	if err != nil {
		return fmt.Errorf("model export: %w", err)
	}
	c = c.ForFederatedTask(*task)
	// The JSON answer names the version, and so the default file name; it
	// is read first for ONNX too.
	m, err := c.FederatedModel(ctx)
	if err != nil {
		return fmt.Errorf("model export: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *format == "onnx" {
		if b, err = c.FederatedModelONNX(ctx); err != nil {
			return fmt.Errorf("model export: %w", err)
		}
	}
	if *out == "-" {
		_, err := stdout.Write(b)
		return err
	}
	if *out == "" {
		id := *task
		if id == "" {
			st, err := c.FederatedTask(ctx)
			if err != nil {
				return fmt.Errorf("model export: %w", err)
			}
			id = st.ID
		}
		*out = federated.ModelFileName(id, m.ModelVersion, *format)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return fmt.Errorf("model export: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "model %s written to %s (%s, %d bytes)\n", m.ModelVersion, *out, *format, len(b))
	return err
}

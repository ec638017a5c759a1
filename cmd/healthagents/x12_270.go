package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/healthagents/healthagents/client"
)

// x12Inquire is `healthagents x12 270 --server URL [--api-key KEY] <
// request.270 > answer.271`: it sends an X12 270 interchange to a running
// service's POST /api/v1/eligibility/x12 and writes the service's X12
// answer (the 271, or the 999 or TA1 refusing the 270) on standard output.
// Each question is decided, proven and recorded by the service as POST
// /api/v1/eligibility/verify does it (docs/x12.md).
func x12Inquire(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("x12 270", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", getenv("HEALTHAGENTS_URL"), "the service's base URL (default $HEALTHAGENTS_URL)")
	apiKey := fs.String("api-key", getenv("HEALTHAGENTS_API_KEY"), "an API key with the eligibility scope (default $HEALTHAGENTS_API_KEY)")
	timeout := fs.Duration("timeout", 30*time.Second, "deadline of the whole call, retries included")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("x12 270: %w", err)
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("x12 270: unexpected argument %q (the 270 is read from standard input)", fs.Arg(0))
	case *server == "":
		return errors.New("x12 270: --server (or HEALTHAGENTS_URL) is required")
	case *apiKey == "":
		return errors.New("x12 270: --api-key (or HEALTHAGENTS_API_KEY) is required")
	}
	in, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return fmt.Errorf("x12 270: reading standard input: %w", err)
	}
	c, err := client.New(*server, client.WithAPIKey(*apiKey), client.WithTimeout(*timeout))
	if err != nil {
		return fmt.Errorf("x12 270: %w", err)
	}
	out, err := c.EligibilityX12(ctx, in)
	if len(out) > 0 {
		// A 429 or 503 still carries its X12 answer (AAA 04 or 42).
		if _, werr := stdout.Write(out); werr != nil {
			return werr
		}
	}
	if err != nil {
		return fmt.Errorf("x12 270: %w", err)
	}
	return nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
)

// benchTarget is one endpoint the load command drives, with the spec's
// typical response times (section 8: min / average / max).
type benchTarget struct {
	name, method, path string
	body               func() []byte
	spec               string
}

// benchResult is what one endpoint measured.
type benchResult struct {
	name      string
	latencies []time.Duration
	statuses  map[int]int
	errors    int
	elapsed   time.Duration
	spec      string
}

// bench drives a running server over the network with a bounded number of
// requests and concurrency, and prints latency percentiles and throughput per
// endpoint beside the spec's typical response times.
func bench(ctx context.Context, cfg app.Config, logger *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("url", "http://127.0.0.1:8000", "base URL of a running healthagents server")
	n := fs.Int("n", 200, "requests per endpoint (at most 100000)")
	c := fs.Int("c", 4, "concurrent requests (at most 256)")
	only := fs.String("endpoints", "health,status,verify-eligibility,validate-prescription", "comma-separated endpoints")
	recordPath := fs.String("record", "testdata/record.json", "plaintext record to seal for the POST endpoints")
	apiKey := fs.String("key", "", "API key to send as a bearer token (optional)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("bench: %w (flags: -url -n -c -endpoints -record -key)", err)
	}
	if *n < 1 || *n > 100000 || *c < 1 || *c > 256 {
		return errors.New("bench: -n must be 1..100000 and -c 1..256")
	}
	plaintext, err := os.ReadFile(*recordPath)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	rec, err := record.Parse(plaintext)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	kr, err := app.LoadKeyring(cfg, logger)
	if err != nil {
		return err
	}
	env, err := cipher.Seal(rec.PatientID, plaintext, kr)
	if err != nil {
		return err
	}
	post := func(field, code string) func() []byte {
		b, _ := json.Marshal(map[string]any{"patient_data": env, field: code})
		return func() []byte { return b }
	}
	targets := []benchTarget{
		{"health", "GET", "/health", nil, "1 / 5 / 10 ms"},
		{"status", "GET", "/status", nil, "2 / 10 / 20 ms"},
		{"verify-eligibility", "POST", "/verify-eligibility", post("procedure_code", "PROC001"), "200 / 400 / 1000 ms"},
		{"validate-prescription", "POST", "/validate-prescription", post("drug_code", "6809"), "400 / 800 / 1300 ms"},
	}
	want := strings.Split(*only, ",")
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *c}}
	var results []benchResult
	for _, t := range targets {
		if !slices.Contains(want, t.name) {
			continue
		}
		r, err := runTarget(ctx, client, *base, *apiKey, t, *n, *c)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if len(results) == 0 {
		return errors.New("bench: no known endpoint selected")
	}
	printBench(stdout, *base, *n, *c, results)
	return nil
}

func runTarget(ctx context.Context, client *http.Client, base, key string, t benchTarget, n, c int) (benchResult, error) {
	res := benchResult{name: t.name, statuses: map[int]int{}, spec: t.spec}
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				var body io.Reader
				if t.body != nil {
					body = bytes.NewReader(t.body())
				}
				req, err := http.NewRequestWithContext(ctx, t.method, base+t.path, body)
				if err != nil {
					return
				}
				req.Header.Set("Content-Type", "application/json")
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				d := time.Since(t0)
				status := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				mu.Lock()
				switch {
				case err != nil:
					res.errors++
				case status < 300:
					res.statuses[status]++
					res.latencies = append(res.latencies, d) // percentiles of answers, not refusals
				default:
					res.statuses[status]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted)-1) + 0.5)
	return sorted[i]
}

func printBench(w io.Writer, base string, n, c int, results []benchResult) {
	fmt.Fprintf(w, "healthagents bench: %s, %d requests per endpoint, concurrency %d\n", base, n, c)
	fmt.Fprintf(w, "(latency percentiles and req/s count 2xx answers only; refusals such as 429 are listed under statuses)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\tp50\tp95\tp99\treq/s\tstatuses\terrors\tspec typical (min / avg / max)\t")
	for _, r := range results {
		slices.Sort(r.latencies)
		var statuses []string
		for _, s := range slices.Sorted(maps.Keys(r.statuses)) {
			statuses = append(statuses, fmt.Sprintf("%d×%d", s, r.statuses[s]))
		}
		rps := float64(len(r.latencies)) / r.elapsed.Seconds()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%s\t%d\t%s\t\n", r.name,
			ms(percentile(r.latencies, 0.50)), ms(percentile(r.latencies, 0.95)), ms(percentile(r.latencies, 0.99)),
			rps, strings.Join(statuses, " "), r.errors, r.spec)
	}
	tw.Flush()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

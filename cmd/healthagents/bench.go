package main

import (
	"bytes"
	"context"
	"encoding/hex"
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/ratelimit"
)

// benchTarget is one endpoint the load command drives, with the typical
// response times the service is held to (min / average / max; the targets
// of docs/benchmarks.md).
type benchTarget struct {
	name, method, path string
	body               func() []byte
	spec               string
	// prepare, when set, gives request i its body and bearer before its
	// clock starts, and observe sees its answer (the federated target
	// follows the rounds with them).
	prepare func(ctx context.Context, i int64) (body []byte, bearer string, err error)
	observe func(status int, body []byte)
	// decision: a 2xx answer is a decision whose blockchain_tx anchors it
	// (its own transaction, or its batch's); bench reads it from the body.
	decision bool
}

// benchResult is what one endpoint measured.
type benchResult struct {
	name      string
	latencies []time.Duration // 2xx answers
	sheds     []time.Duration // 429 and 503 refusals
	statuses  map[int]int
	errors    int
	dropped   int // open loop: not sent, -c requests were already outstanding
	elapsed   time.Duration
	serverCPU time.Duration // CPU time the server process used (with -pid), -1 unknown
	spec      string
	// decision endpoints: the answers' blockchain_tx, with how many 2xx
	// answers named each (a batch's decisions share one), and with -rpc
	// the gas their receipts used, counted once per transaction.
	decision bool
	txs      map[string]int
	noTx     int    // 2xx answers without a blockchain_tx
	gas      uint64 // sum of gasUsed over the distinct receipts
	failed   int    // receipts with status 0
	receipts bool   // gas was read (-rpc)
	// answers: with -verify, each 2xx decision answer naming a
	// blockchain_tx, kept whole (it is what verify-decision --statement
	// reads) until it is checked after the run; verification: what the
	// checks found.
	answers      []benchAnswer
	verification *benchVerification
	// details: the detail of the first refusal (4xx/5xx) of each status,
	// printed under the table (the service's details hold no record data).
	details map[int]string
}

// benchRun is how the load is driven.
type benchRun struct {
	base, key string
	rpc       string   // Ethereum JSON-RPC endpoint for the receipts; empty: no gas
	keys      []string // the run's own keys, request i sending keys[i%len] (bench_keys.go)
	n, c      int
	rate      float64 // requests/s, open loop; 0: closed loop with c workers
	spread    int     // distinct X-Forwarded-For client addresses; 0: none
	verify    bool    // keep the decision answers and check each after its run (bench_verify.go)
}

// bench drives a running server over the network with a bounded number of
// requests and concurrency, and prints latency percentiles and throughput per
// endpoint beside its typical response times.
func bench(ctx context.Context, cfg app.Config, logger *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if slices.ContainsFunc(args, isHelp) {
		fs.SetOutput(stdout) // -h prints the flags
	}
	base := fs.String("url", "http://127.0.0.1:8000", "base URL of a running healthagents server")
	n := fs.Int("n", 200, "requests per endpoint (at most 1000000)")
	c := fs.Int("c", 4, "concurrent requests; with -rate, the most outstanding at once (at most 4096)")
	rate := fs.Float64("rate", 0, "open loop: send at this many requests/s whatever the answers, instead of -c workers back to back")
	spread := fs.Int("spread", 0, "send X-Forwarded-For from this many client addresses, as a load balancer would (the server needs TRUSTED_PROXIES=127.0.0.1)")
	pid := fs.Int("pid", 0, "server process id: report its peak resident memory (VmHWM, Linux)")
	only := fs.String("endpoints", "health,status,verify-eligibility,validate-prescription", "comma-separated endpoints (also: submit-federated-update)")
	recordPath := fs.String("record", "testdata/record.json", "plaintext record to seal for the POST endpoints")
	apiKey := fs.String("key", "", "API key to send as a bearer token; without it (and without -spread) bench creates enterprise-tier keys of its own, enough that no per-minute figure refuses the run, and revokes them after")
	records := fs.Int("records", 1000, "records per /submit-federated-update request (the spec advises at most 1000)")
	adminToken := fs.String("admin-token", cfg.AdminToken, "bearer that may create keys (ADMIN_TOKEN by default): submit-federated-update creates an organization key per request")
	rpcURL := fs.String("rpc", "", "Ethereum JSON-RPC endpoint of the service's chain (its CHAIN_RPC_LISTEN, or the CHAIN_ENDPOINT node): report gas per decision from the receipts of the answers' blockchain_tx, each distinct transaction counted once")
	verifyAll := fs.Bool("verify", false, "with -rpc: after each decision endpoint's run (outside its timing), check every 2xx decision as verify-decision would, the whole answer as --statement and the registry from the server's GET /status; any decision not verified fails the run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the flags were printed
		}
		return fmt.Errorf("bench: %w (flags: -url -n -c -rate -spread -pid -endpoints -record -key -records -admin-token -rpc -verify)", err)
	}
	if *verifyAll && *rpcURL == "" {
		return errors.New("bench: -verify checks every decision on the chain: it needs -rpc, the chain's JSON-RPC endpoint (the service's CHAIN_RPC_LISTEN, or the CHAIN_ENDPOINT node)")
	}
	if *n < 1 || *n > 1000000 || *c < 1 || *c > 4096 || *rate < 0 || *spread < 0 || *spread > 1<<24 || *pid < 0 || *records < 1 || *records > 5000 {
		return errors.New("bench: -n must be 1..1000000, -c 1..4096, -rate and -pid not negative, -spread 0..16777216, -records 1..5000")
	}
	plaintext, err := os.ReadFile(*recordPath)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	rec, err := fhir.ParseRecord(plaintext) // our record JSON or a FHIR R4 Bundle
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
		{name: "health", method: "GET", path: "/health", spec: "1 / 5 / 10 ms"},
		{name: "status", method: "GET", path: "/status", spec: "2 / 10 / 20 ms"},
		{name: "verify-eligibility", method: "POST", path: "/verify-eligibility", body: post("procedure_code", "PROC001"), spec: "200 / 400 / 1000 ms", decision: true},
		{name: "validate-prescription", method: "POST", path: "/validate-prescription", body: post("drug_code", "6809"), spec: "400 / 800 / 1300 ms", decision: true},
	}
	want := strings.Split(*only, ",")
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *c}}
	if slices.Contains(want, "submit-federated-update") {
		admin := *adminToken
		if admin == "" {
			admin = *apiKey
		}
		fb, err := newFedBench(ctx, client, *base, admin, rec, *records, *n, kr)
		if err != nil {
			return err
		}
		targets = append(targets, benchTarget{name: "submit-federated-update", method: "POST", path: "/submit-federated-update",
			spec: "500 / 2000 / 5000 ms", prepare: fb.prepare, observe: fb.observe})
	}
	run := benchRun{base: *base, key: *apiKey, rpc: *rpcURL, n: *n, c: *c, rate: *rate, spread: *spread, verify: *verifyAll}
	var registry common.Address
	if run.verify {
		// Pinned before the runs, so a server without a chain is refused
		// before any load.
		if registry, err = benchRegistry(ctx, client, run); err != nil {
			return err
		}
	}
	if *apiKey == "" && *spread == 0 {
		keys, done, err := benchKeys(ctx, cfg, client, *base, *adminToken, benchKeyCount(ratelimit.DefaultPolicy(), want, *n))
		if err != nil {
			return err
		}
		defer done()
		run.keys = keys
	}
	hwmBefore := peakRSS(*pid)
	var results []benchResult
	for _, t := range targets {
		if !slices.Contains(want, t.name) {
			continue
		}
		cpu0 := processCPU(*pid)
		r, err := runTarget(ctx, client, run, t)
		if err != nil {
			return err
		}
		r.serverCPU = -1
		if cpu1 := processCPU(*pid); cpu0 >= 0 && cpu1 >= 0 {
			r.serverCPU = cpu1 - cpu0
		}
		if r.decision && run.rpc != "" {
			if err := receiptGas(ctx, run.rpc, &r); err != nil {
				return err
			}
		}
		if r.decision && run.verify {
			// After the run and its CPU reading, before the next run.
			if err := verifyAnswers(ctx, run.rpc, registry, &r); err != nil {
				return err
			}
		}
		results = append(results, r)
	}
	if len(results) == 0 {
		return errors.New("bench: no known endpoint selected")
	}
	printBench(stdout, run, results)
	printDecisions(stdout, results)
	printVerification(stdout, registry, results)
	if *pid > 0 {
		fmt.Fprintf(stdout, "\nserver pid %d: peak RSS (VmHWM) %s before the run, %s after; RSS now %s\n",
			*pid, hwmBefore, peakRSS(*pid), procStatus(*pid, "VmRSS"))
	}
	return verificationError(results)
}

// runTarget drives one endpoint: closed loop (c workers, each sending its
// next request when the last is answered) or, with a rate, open loop
// (requests start on schedule whatever the answers, at most c outstanding;
// one due while c are outstanding is counted as dropped, not sent).
func runTarget(ctx context.Context, client *http.Client, run benchRun, t benchTarget) (benchResult, error) {
	res := benchResult{name: t.name, statuses: map[int]int{}, spec: t.spec, decision: t.decision, txs: map[string]int{}, details: map[int]string{}}
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	one := func(i int64, t0 time.Time) {
		a, err := send(ctx, client, run, t, i)
		if run.rate == 0 {
			t0 = a.started // closed loop: from the request, after any preparation
		}
		d := time.Since(t0)
		mu.Lock()
		defer mu.Unlock()
		status := a.status
		if _, seen := res.details[status]; status >= 400 && !seen {
			res.details[status] = a.detail
		}
		switch {
		case err != nil:
			res.errors++
		case status < 300:
			res.statuses[status]++
			res.latencies = append(res.latencies, d)
			if a.tx != "" {
				res.txs[a.tx]++
				if a.body != nil {
					res.answers = append(res.answers, benchAnswer{tx: a.tx, body: a.body})
				}
			} else if t.decision {
				res.noTx++
			}
		case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
			res.statuses[status]++
			res.sheds = append(res.sheds, d)
		default:
			res.statuses[status]++
		}
	}
	start := time.Now()
	if run.rate > 0 {
		outstanding := make(chan struct{}, run.c)
		interval := time.Duration(float64(time.Second) / run.rate)
		for i := range int64(run.n) {
			due := start.Add(time.Duration(i) * interval)
			if d := time.Until(due); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				break
			}
			select {
			case outstanding <- struct{}{}:
			default:
				mu.Lock()
				res.dropped++
				mu.Unlock()
				continue
			}
			wg.Go(func() {
				defer func() { <-outstanding }()
				one(i, due) // latency from the scheduled start: no coordinated omission
			})
		}
	} else {
		for range run.c {
			wg.Go(func() {
				for i := next.Add(1); i <= int64(run.n) && ctx.Err() == nil; i = next.Add(1) {
					one(i, time.Now())
				}
			})
		}
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// sent is what send saw of one answer.
type sent struct {
	status  int
	started time.Time // when the request was sent
	tx      string    // a 2xx decision's blockchain_tx, lower case
	detail  string    // a refusal's detail
	body    []byte    // with -verify, a 2xx decision's whole answer (nil without its blockchain_tx)
}

// send makes request i and returns what it saw of the answer.
func send(ctx context.Context, client *http.Client, run benchRun, t benchTarget, i int64) (sent, error) {
	var body io.Reader
	bearer := run.key
	if bearer == "" && len(run.keys) > 0 {
		bearer = run.keys[i%int64(len(run.keys))]
	}
	if t.prepare != nil {
		b, key, err := t.prepare(ctx, i)
		if err != nil {
			return sent{started: time.Now()}, err
		}
		body, bearer = bytes.NewReader(b), key
	} else if t.body != nil {
		body = bytes.NewReader(t.body())
	}
	started := time.Now()
	req, err := http.NewRequestWithContext(ctx, t.method, run.base+t.path, body)
	if err != nil {
		return sent{started: started}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if run.spread > 0 {
		a := i % int64(run.spread)
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", a>>16&255, a>>8&255, a&255))
	}
	resp, err := client.Do(req)
	if err != nil {
		return sent{started: started}, err
	}
	a := sent{status: resp.StatusCode, started: started}
	switch {
	case t.observe != nil || resp.StatusCode >= 400:
		out, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if t.observe != nil {
			t.observe(resp.StatusCode, out)
		}
		if resp.StatusCode >= 400 {
			var refusal struct {
				Detail string `json:"detail"`
			}
			_ = json.Unmarshal(out, &refusal)
			a.detail = refusal.Detail
		}
	case t.decision && resp.StatusCode < 300:
		var answer struct {
			Tx string `json:"blockchain_tx"`
		}
		if !run.verify {
			if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&answer) == nil {
				a.tx = strings.ToLower(answer.Tx)
			}
			break
		}
		// Kept whole, at its own size, for the check after the run: its
		// statement and proof are read there, outside the timing.
		out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err == nil && json.Unmarshal(out, &answer) == nil && answer.Tx != "" {
			a.tx, a.body = strings.ToLower(answer.Tx), out // io.ReadAll's own slice
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return a, nil
}

// receiptGas reads the receipt of every distinct transaction r's answers
// named (eth_getTransactionReceipt at rpcURL) and sums their gas: a batch's
// transaction is counted once however many decisions it anchors.
func receiptGas(ctx context.Context, rpcURL string, r *benchResult) error {
	c, err := ethclient.DialContext(ctx, rpcURL)
	if err != nil {
		return fmt.Errorf("bench: -rpc %s: %w", rpcURL, err)
	}
	defer c.Close()
	for _, tx := range slices.Sorted(maps.Keys(r.txs)) {
		if !isTxHash(tx) {
			return fmt.Errorf("bench: %s answered blockchain_tx %q, not a transaction hash", r.name, tx)
		}
		rc, err := c.TransactionReceipt(ctx, common.HexToHash(tx))
		if err != nil {
			return fmt.Errorf("bench: receipt of %s's transaction %s from %s: %w", r.name, tx, rpcURL, err)
		}
		r.gas += rc.GasUsed
		if rc.Status != types.ReceiptStatusSuccessful {
			r.failed++
		}
	}
	r.receipts = true
	return nil
}

// isTxHash reports whether s is 0x and 64 hex digits.
func isTxHash(s string) bool {
	if len(s) != 66 || !strings.HasPrefix(s, "0x") {
		return false
	}
	_, err := hex.DecodeString(s[2:])
	return err == nil
}

// printDecisions prints, for the decision endpoints, the sustained rate of
// decisions and, with -rpc, the gas per decision read from the receipts.
func printDecisions(w io.Writer, results []benchResult) {
	var rows []benchResult
	for _, r := range results {
		if r.decision {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\ndecisions: 2xx answers of a decision endpoint; decisions/s over its whole run; transactions: distinct blockchain_tx\n")
	fmt.Fprintf(w, "(a batch's decisions share one); gas: the sum of gasUsed over those transactions' receipts (-rpc), gas/decision = gas / decisions\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\tdecisions\tdecisions/s\ttransactions\tdecisions/tx\twithout tx\tgas\tgas/decision\tfailed receipts\t")
	for _, r := range rows {
		decisions := len(r.latencies)
		perTx, gas, perDecision, failed := "–", "– (-rpc)", "– (-rpc)", "–"
		if len(r.txs) > 0 {
			perTx = fmt.Sprintf("%.2f", float64(decisions-r.noTx)/float64(len(r.txs)))
		}
		if r.receipts {
			gas, failed = strconv.FormatUint(r.gas, 10), strconv.Itoa(r.failed)
			perDecision = "–"
			if decisions > 0 {
				perDecision = fmt.Sprintf("%.1f", float64(r.gas)/float64(decisions))
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%d\t%s\t%d\t%s\t%s\t%s\t\n", r.name, decisions,
			float64(decisions)/r.elapsed.Seconds(), len(r.txs), perTx, r.noTx, gas, perDecision, failed)
	}
	tw.Flush()
}

// processCPU reads the user plus system CPU time of a process from
// /proc/<pid>/stat (Linux, USER_HZ = 100), or -1.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name may hold spaces; the fields after it do not.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	var utime, stime int64
	if _, err := fmt.Sscan(f[11], &utime); err != nil {
		return -1
	}
	if _, err := fmt.Sscan(f[12], &stime); err != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// peakRSS reads a process's peak resident set size (Linux), or "n/a".
func peakRSS(pid int) string { return procStatus(pid, "VmHWM") }

// procStatus reads one memory field of /proc/<pid>/status as MiB.
func procStatus(pid int, field string) string {
	if pid <= 0 {
		return "n/a"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "n/a"
	}
	for line := range strings.Lines(string(b)) {
		v, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err != nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
	}
	return "n/a"
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted)-1) + 0.5)
	return sorted[i]
}

func printBench(w io.Writer, run benchRun, results []benchResult) {
	mode := fmt.Sprintf("concurrency %d", run.c)
	if run.rate > 0 {
		mode = fmt.Sprintf("open loop at %.0f requests/s, at most %d outstanding", run.rate, run.c)
	}
	if run.spread > 0 {
		mode += fmt.Sprintf(", X-Forwarded-For over %d client addresses", run.spread)
	}
	if len(run.keys) > 0 {
		mode += fmt.Sprintf(", %d enterprise key(s) of its own", len(run.keys))
	}
	fmt.Fprintf(w, "healthagents bench: %s, %d requests per endpoint, %s\n", run.base, run.n, mode)
	fmt.Fprintf(w, "(p50/p95/p99 and ok/s count 2xx answers, all/s every answer; shed p50/p99 count 429 and 503 refusals;\n")
	fmt.Fprintf(w, " server CPU/req is the server's user+system CPU time over the answers, with -pid)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\tp50\tp95\tp99\tok/s\tall/s\tshed p50\tshed p99\tstatuses\terrors\tdropped\tserver CPU/req\tspec typical (min / avg / max)\t")
	for _, r := range results {
		slices.Sort(r.latencies)
		slices.Sort(r.sheds)
		var statuses []string
		for _, s := range slices.Sorted(maps.Keys(r.statuses)) {
			statuses = append(statuses, fmt.Sprintf("%d×%d", s, r.statuses[s]))
		}
		answered := 0
		for _, n := range r.statuses {
			answered += n
		}
		cpu := "–"
		if r.serverCPU >= 0 && answered > 0 {
			cpu = fmt.Sprintf("%.3f ms", float64(r.serverCPU.Microseconds())/1000/float64(answered))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%.0f\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", r.name,
			ms(percentile(r.latencies, 0.50)), ms(percentile(r.latencies, 0.95)), ms(percentile(r.latencies, 0.99)),
			float64(len(r.latencies))/r.elapsed.Seconds(), float64(answered)/r.elapsed.Seconds(),
			msOrNone(r.sheds, 0.50), msOrNone(r.sheds, 0.99),
			strings.Join(statuses, " "), r.errors, r.dropped, cpu, r.spec)
	}
	tw.Flush()
	for _, r := range results {
		for _, s := range slices.Sorted(maps.Keys(r.details)) {
			fmt.Fprintf(w, "%s: first %d answer: %q\n", r.name, s, r.details[s])
		}
	}
}

// msOrNone is the percentile p of sorted, or "–" when it is empty.
func msOrNone(sorted []time.Duration, p float64) string {
	if len(sorted) == 0 {
		return "–"
	}
	return ms(percentile(sorted, p))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

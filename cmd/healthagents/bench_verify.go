package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/verify"
)

// bench -verify: every 2xx decision answer of a run is checked, after the
// run, as `verify-decision --tx <its blockchain_tx> --registry <GET /status
// blockchain.registry> --statement <the answer>` would. Nothing of an
// answer is printed but its transaction hash and the names of the checks
// that failed: a statement's opening is the decision (codes, days,
// outcome), medical data.

// verifyWorkers is how many answers are checked at once: each check is a
// handful of JSON-RPC calls, one of them an eth_call re-running a pairing.
const verifyWorkers = 4

// verifyTimeout bounds one answer's check, as verify-decision's --timeout.
const verifyTimeout = 30 * time.Second

// benchAnswer is one 2xx decision answer kept for its check.
type benchAnswer struct {
	tx   string // its blockchain_tx
	body []byte // the whole answer; released once checked
}

// benchVerification is what the checks of one endpoint's answers found.
type benchVerification struct {
	verified, refused, unchecked int
	first                        *answerFailure // the earliest answer (in arrival order) not verified
}

// answerFailure is an answer that did not verify: its transaction, the
// checks that failed, and err, an *exitError with verify-decision's exit
// status for it.
type answerFailure struct {
	index  int
	tx     string
	failed []string
	err    error
}

func (f *answerFailure) String() string {
	switch {
	case f.tx == "":
		return fmt.Sprintf("not checked: %v", f.err)
	case exitStatus(f.err) == exitRefused:
		return fmt.Sprintf("transaction %s refused, failed checks: %s", f.tx, strings.Join(f.failed, ", "))
	case len(f.failed) > 0:
		return fmt.Sprintf("transaction %s not verified, checks not made: %s", f.tx, strings.Join(f.failed, ", "))
	}
	return fmt.Sprintf("transaction %s not checked: %v", f.tx, f.err)
}

// exitStatus is the exit status err asks for (*exitError), else 1.
func exitStatus(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

// benchRegistry reads the registry to pin from the server's GET /status
// (blockchain.registry), as docs/verify.md tells a third party to; with
// -key it sends that key, else none (the route takes anonymous callers).
func benchRegistry(ctx context.Context, client *http.Client, run benchRun) (common.Address, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, run.base+"/status", nil)
	if err != nil {
		return common.Address{}, err
	}
	if run.key != "" {
		req.Header.Set("Authorization", "Bearer "+run.key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return common.Address{}, fmt.Errorf("bench: -verify: GET /status: %w", err)
	}
	defer resp.Body.Close()
	var st healthagents.SystemStatus
	if resp.StatusCode != http.StatusOK {
		return common.Address{}, fmt.Errorf("bench: -verify: GET /status answered %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return common.Address{}, fmt.Errorf("bench: -verify: GET /status: %w", err)
	}
	if !common.IsHexAddress(st.Blockchain.Registry) {
		return common.Address{}, fmt.Errorf("bench: -verify: GET /status names no registry (blockchain.registry %q): the server records no decision to check", st.Blockchain.Registry)
	}
	return common.HexToAddress(st.Blockchain.Registry), nil
}

// verifyAnswers checks every answer r kept, verifyWorkers at a time, and
// sets r.verification; each answer is released once checked. An answer
// without a blockchain_tx counts as not checked. The error is for a node
// that cannot be dialled, or ctx ended.
func verifyAnswers(ctx context.Context, rpcURL string, registry common.Address, r *benchResult) error {
	c, err := ethclient.DialContext(ctx, rpcURL)
	if err != nil {
		return fmt.Errorf("bench: -rpc %s: %w", rpcURL, err)
	}
	defer c.Close()
	v := &benchVerification{unchecked: r.noTx}
	if r.noTx > 0 {
		v.first = &answerFailure{index: -1, err: exitWith(exitCannotRun, "%d answer(s) named no blockchain_tx", r.noTx)}
	}
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(verifyWorkers, len(r.answers)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(r.answers) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				a := r.answers[i]
				actx, cancel := context.WithTimeout(ctx, verifyTimeout)
				failed, err := checkAnswer(actx, c, registry, a.tx, a.body)
				cancel()
				r.answers[i].body = nil // each index is one worker's
				mu.Lock()
				switch {
				case err == nil:
					v.verified++
				case exitStatus(err) == exitRefused:
					v.refused++
				default:
					v.unchecked++
				}
				if err != nil && (v.first == nil || (v.first.index >= 0 && i < v.first.index)) {
					v.first = &answerFailure{index: i, tx: a.tx, failed: failed, err: err}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.answers = nil
	r.verification = v
	return ctx.Err()
}

// checkAnswer checks one decision answer (body, the whole response) as
// `verify-decision --tx TX --registry REGISTRY --statement <the answer>`
// does: the statement read by parseStatement, a batched leaf's proof found
// by parseProofs, the same verify.Decision call and its verdict. It returns
// nil when every check passed; else the names of the checks that failed
// and an *exitError with verify-decision's exit status (exitRefused: a
// check failed; exitUnverified: a batched leaf without its proof;
// exitCannotRun: the node did not answer, the transaction is not a hash).
// Neither holds a value of the answer: a statement that does not parse is
// named "statement", not quoted.
func checkAnswer(ctx context.Context, c verify.Chain, registry common.Address, tx string, body []byte) (failed []string, err error) {
	if !isHash(tx) {
		return nil, exitWith(exitCannotRun, "blockchain_tx is not a 32-byte 0x-hex transaction hash")
	}
	h := common.HexToHash(tx)
	st, _, err := parseStatement(body, "the answer", h)
	if err != nil {
		return []string{"statement"}, exitWith(exitRefused, "the statement is refused")
	}
	var proof *verify.Proof
	if st.Batch != nil {
		if proof, _, err = parseProofs(body, "the answer", false, h); err != nil {
			return []string{"proof"}, exitWith(exitRefused, "the proof is refused")
		}
	}
	rep, err := verify.Decision(ctx, c, h, verify.Options{Registry: registry, Statement: &st, Proof: proof, Confirmations: 1})
	if err != nil {
		return nil, exitWith(exitCannotRun, "%w", err)
	}
	return rep.Failed(), verdict(rep, true)
}

// printVerification prints, for the endpoints checked with -verify, how
// many decisions verified, were refused or could not be checked, and the
// first that did not verify.
func printVerification(w io.Writer, registry common.Address, results []benchResult) {
	var rows []benchResult
	for _, r := range results {
		if r.verification != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nverification (-verify): after each endpoint's run, every 2xx decision checked as verify-decision --tx <its blockchain_tx>\n")
	fmt.Fprintf(w, "--registry %s (GET /status) --statement <the answer> would; refused: a check failed; not checked: no\n", registry.Hex())
	fmt.Fprintf(w, "blockchain_tx, a batched decision without its proof, or the node did not answer\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\tdecisions\tverified\trefused\tnot checked\t")
	for _, r := range rows {
		v := r.verification
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", r.name, len(r.latencies), v.verified, v.refused, v.unchecked)
	}
	tw.Flush()
	for _, r := range rows {
		switch v := r.verification; {
		case v.first != nil:
			fmt.Fprintf(w, "%s: first decision not verified: %s\n", r.name, v.first)
		case v.verified == 0:
			fmt.Fprintf(w, "%s: no 2xx decision to check\n", r.name)
		default:
			fmt.Fprintf(w, "%s: all %d decisions verified\n", r.name, v.verified)
		}
	}
}

// verificationError fails the run when any decision checked did not
// verify, so a scripted run fails closed.
func verificationError(results []benchResult) error {
	var errs []error
	for _, r := range results {
		if v := r.verification; v != nil && v.first != nil {
			errs = append(errs, fmt.Errorf("bench: -verify: %s: %d of %d decisions refused, %d not checked (first: %s)",
				r.name, v.refused, len(r.latencies), v.unchecked, v.first))
		}
	}
	return errors.Join(errs...)
}

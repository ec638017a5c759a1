// Package clitest holds what the tests of the healthagents command and its
// end-to-end tests (cmd/healthagents/e2e) share: the binaries they run,
// linked once per checkout and source (in the test cache), processes of it with their output in a file, free ports,
// waiting for /health, and a CSV dealt to several hospitals, read back or
// sealed as the hospital's encrypted records.
package clitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/internal/testcache"
	"github.com/healthagents/healthagents/record"
)

const binaryPackage = "github.com/healthagents/healthagents/cmd/healthagents"

var binaries sync.Map // package → *builtBinary

type builtBinary struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the healthagents binary (static, CGO_ENABLED=0, as the
// Dockerfile builds it), built by Build.
func Binary(t *testing.T) string {
	t.Helper()
	return Build(t, binaryPackage)
}

// Build links the main package pkg (an import path, or a directory
// relative to the module's root such as ./examples/mount) and returns the
// binary's path: one link per content of its sources, shared by every
// checkout and run (see Link).
func Build(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := binaries.LoadOrStore(pkg, &builtBinary{})
	b := v.(*builtBinary)
	b.once.Do(func() {
		b.path, b.err = func() (string, error) {
			gomod, err := exec.Command("go", "env", "GOMOD").Output()
			if err != nil {
				return "", fmt.Errorf("go env GOMOD: %w", err)
			}
			c, err := testcache.Open()
			if err != nil {
				return "", err
			}
			return Link(c, filepath.Dir(strings.TrimSpace(string(gomod))), pkg)
		}()
	})
	if b.err != nil {
		t.Fatalf("go build %s: %v", pkg, b.err)
	}
	return b.path
}

// Proc is a process of the binary with its output in a file.
type Proc struct {
	Cmd *exec.Cmd
	Out string     // the output file
	Err chan error // receives the process's exit
}

// The variables the command reads when a test harness starts it
// (cmd/healthagents/harness.go; TestHarnessVariables keeps the two lists
// equal).
const (
	CacheEnv        = testcache.DirEnv
	ProofTimeoutEnv = "HEALTHAGENTS_TEST_PROOF_TIMEOUT"
	// WebhookLeaseEnv is not in HarnessEnv: a test that kills a server
	// mid-delivery gives it (see app.Config.WebhookLease).
	WebhookLeaseEnv = "HEALTHAGENTS_TEST_WEBHOOK_LEASE"
	// WebhookTimeoutEnv (app.Config.WebhookTimeout) goes with
	// WebhookLeaseEnv: a shorter attempt timeout allows a shorter lease.
	WebhookTimeoutEnv = "HEALTHAGENTS_TEST_WEBHOOK_TIMEOUT"
	// FederatedLeaseEnv (app.Config.FederatedLease) is given by a test
	// that kills the leading replica.
	FederatedLeaseEnv = "HEALTHAGENTS_TEST_FEDERATED_LEASE"
)

// HarnessEnv is what every process of the command a test starts gets
// beside its settings: the test cache, from which a server reads the fast
// prover's tables of its keys (built once per machine, checked against
// the keys at every start, instead of a few CPU-seconds at every start),
// and a proof deadline of two minutes (a test checks a proof's answer, not
// its speed, on a machine that may be busy).
func HarnessEnv(t *testing.T) []string {
	t.Helper()
	c, err := testcache.Open()
	require.NoError(t, err)
	return []string{CacheEnv + "=" + c.Dir(), ProofTimeoutEnv + "=2m"}
}

// StartProc starts bin with args and env (and HarnessEnv), appending its
// output to the file out; the process is killed when the test ends.
func StartProc(t *testing.T, bin string, env []string, out string, args ...string) *Proc {
	t.Helper()
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = append(slices.Clip(env), HarnessEnv(t)...), f, f
	require.NoError(t, cmd.Start())
	p := &Proc{Cmd: cmd, Out: out, Err: make(chan error, 1)}
	go func() { p.Err <- cmd.Wait(); f.Close() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// Output is what the process printed so far.
func (p *Proc) Output() string {
	b, _ := os.ReadFile(p.Out)
	return string(b)
}

// WaitOutput waits until the process's output contains s.
func (p *Proc) WaitOutput(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.Output(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %s:\n%s", s, p.Out, p.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WaitHealthy waits until url answers 200; the first start of a data
// directory sets up the ZK keys, so it allows three minutes.
func WaitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not become healthy: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SplitCSV deals the rows of a CSV with a header round robin into n files
// (hospital-a.csv, hospital-b.csv, … in dir) after a seeded shuffle: each
// hospital's own export.
func SplitCSV(t *testing.T, src, dir string, n int) []string {
	t.Helper()
	f, err := os.Open(src)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	require.True(t, sc.Scan())
	header := sc.Text()
	var rows []string
	for sc.Scan() {
		rows = append(rows, sc.Text())
	}
	require.NoError(t, sc.Err())
	rand.New(rand.NewPCG(18, 18)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	parts := make([][]string, n)
	for i, r := range rows {
		parts[i%n] = append(parts[i%n], r)
	}
	var paths []string
	for i, p := range parts {
		path := filepath.Join(dir, fmt.Sprintf("hospital-%c.csv", 'a'+i))
		require.NoError(t, os.WriteFile(path, []byte(header+"\n"+strings.Join(p, "\n")+"\n"), 0o600))
		paths = append(paths, path)
	}
	return paths
}

// MustRead returns the file's content.
func MustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// ReadCSV reads a hospital's CSV of the task's columns, as the participant
// command does.
func ReadCSV(t *testing.T, tf *federated.TaskFile, path string) []*record.Record {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := tf.ReadCSV(f)
	require.NoError(t, err)
	return recs
}

// SealCSV turns a hospital's CSV into what it holds encrypted: one record
// per row (observations by feature name, the label as the diagnosis, the
// same patient_id), each sealed into an envelope with key, one envelope
// per line of out. It returns the number of records.
func SealCSV(t *testing.T, tf *federated.TaskFile, csvPath, out, key string) int {
	t.Helper()
	recs := ReadCSV(t, tf, csvPath)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	var lines []string
	for _, r := range recs {
		r.Schema = record.Schema
		b, err := r.Marshal()
		require.NoError(t, err)
		env, err := cipher.Seal(r.PatientID, b, kr)
		require.NoError(t, err)
		line, err := json.Marshal(env)
		require.NoError(t, err)
		lines = append(lines, string(line))
	}
	require.NoError(t, os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return len(recs)
}

// WriteKey writes a new Fernet key to path (0600) and returns it.
func WriteKey(t *testing.T, path string) string {
	t.Helper()
	k, err := cipher.GenerateKey()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(k+"\n"), 0o600))
	return k
}

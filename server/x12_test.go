package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/x12"
	"github.com/healthagents/healthagents/x12/core"
	"github.com/healthagents/healthagents/x12/x12test"
	"github.com/healthagents/healthagents/zkp/statement"
)

// countedAttestor is the real attestor (Groth16 proof, mined
// transaction), counting the decisions it proves.
type countedAttestor struct {
	healthagents.Attestor
	n atomic.Int64
}

func (c *countedAttestor) AttestEligibility(ctx context.Context, rec *record.Record, d eligibility.Decision) (*healthagents.Attestation, error) {
	c.n.Add(1)
	return c.Attestor.AttestEligibility(ctx, rec, d)
}

// x12Request is a 270 from CLEARINGHOUSE to payer 60054 for provider
// v1Provider, on the service's day, with the given subscriber loops
// (HL*n*2*22...), their segments separated by ~.
func x12Request(day time.Time, subscribers ...string) []byte {
	body := []string{"BHT*0022*13*BHT-REF-29*" + day.Format("20060102") + "*0900", "HL*1**20*1", "NM1*PR*2*ACME HEALTH*****PI*60054",
		"HL*2*1*21*1", "NM1*1P*2*BONE AND JOINT CLINIC*****XX*" + v1Provider}
	for _, s := range subscribers {
		body = append(body, strings.Split(s, "~")...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ISA*00*          *00*          *ZZ*CLEARINGHOUSE  *ZZ*HEALTHAGENTS   *%s*0900*^*00501*000000729*0*T*:~\n", day.Format("060102"))
	fmt.Fprintf(&b, "GS*HS*CLEARINGHOUSE*HEALTHAGENTS*%s*0900*729*X*005010X279A1~\nST*270*0001*005010X279A1~\n", day.Format("20060102"))
	for _, s := range body {
		b.WriteString(s + "~\n")
	}
	fmt.Fprintf(&b, "SE*%d*0001~\nGE*1*729~\nIEA*1*000000729~\n", len(body)+2)
	return []byte(b.String())
}

// ebs returns the EB and MSG lines of a 271's member loop that follows the
// TRN with the given trace number, up to the next HL.
func ebs(segs [][]string, trace string) []string {
	var out []string
	in := false
	for _, s := range segs {
		switch {
		case s[0] == "TRN" && len(s) > 2 && s[2] == trace:
			in = true
		case s[0] == "HL" || s[0] == "SE":
			if in {
				return out
			}
		case in && (s[0] == "EB" || s[0] == "MSG" || s[0] == "AAA"):
			out = append(out, strings.Join(s, "*"))
		}
	}
	return out
}

// TestX12RoundTrip is the first "done when": a 270 with two
// subscribers and three EQs each, one of them unknown, answers one 271
// both npm parsers accept, with the TRNs echoed, the EBs of the JSON
// route's decisions for the same patient and procedures (each proven and
// recorded on chain), and AAA 75 for the unknown one; the CORE envelope
// round-trips with the same answers.
func TestX12RoundTrip(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	att := &countedAttestor{Attestor: v1Attestor(t, v1SharedApp(t))}
	e := newV1EnvWithAttestor(t, db, att)
	ctx := t.Context()
	c := e.client(t, apikey.CreateParams{Organization: "clinic-x12"})
	require.NoError(t, c.PutPatient(ctx, e.seal(t, v1Record("PT-X12", func(r *record.Record) {
		r.Name = &record.Name{Family: "Doe", Given: "Jane"}
		r.BirthDate = "1968-04-02"
	}))))
	day := time.Now().UTC()
	in := x12Request(day,
		"HL*3*2*22*0~TRN*1*TRACE-KNOWN*9CLEARHOUS~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~EQ*4~EQ**HC:70551~EQ*2",
		"HL*4*2*22*0~TRN*1*TRACE-UNKNOWN*9CLEARHOUS~NM1*IL*1*ROE*RICHARD****MI*W999999999~DMG*D8*19700101~EQ*4~EQ*5~EQ*62",
	)
	out, err := c.EligibilityX12(ctx, in)
	require.NoError(t, err)
	reports := x12test.RequireAccepted(t, out)
	segs := reports[0].Segments() // as node-x12 read them
	require.NotEmpty(t, segs)
	assert.Equal(t, []string{"BHT", "0022", "11", "BHT-REF-29", day.Format("20060102")}, segs[1][:5], "BHT03 from the 270")
	lines := map[string]bool{}
	for _, s := range segs {
		lines[strings.Join(s, "*")] = true
	}
	assert.True(t, lines["TRN*2*TRACE-KNOWN*9CLEARHOUS"], "the known subscriber's TRN echoed")
	assert.True(t, lines["TRN*2*TRACE-UNKNOWN*9CLEARHOUS"], "the unknown subscriber's TRN echoed")
	assert.Equal(t, []string{"AAA*Y**75*C"}, ebs(segs, "TRACE-UNKNOWN"), "the unknown subscriber: not found, nothing else")
	assert.Len(t, reports[0].X12Parser.HL, 4, "x12-parser groups the four HL loops")
	assert.Equal(t, int64(3), att.n.Load(), "three decisions proven: nothing for the unknown member")
	isa := reports[0].NodeX12.Header
	assert.NotEqual(t, "000000729", isa[13], "a control number of our own")
	assert.Equal(t, "CLEARINGHOUSE", strings.TrimSpace(isa[8]), "answered to the sender")

	// The JSON route's decisions for the same patient and procedures.
	known := ebs(segs, "TRACE-KNOWN")
	statements, err := x12.Statements(out)
	require.NoError(t, err)
	assert.Len(t, statements, 3, "a statement per decision")
	for _, q := range []struct{ proc, stc, eb13 string }{{"PROC002", "4", "ZZ:PROC002"}, {"70551", "", "HC:70551"}, {"PROC005", "2", "ZZ:PROC005"}} {
		res, err := c.VerifyEligibilityV1(ctx, healthagents.V1EligibilityRequest{PatientID: "PT-X12", MemberID: "W123456789", ProcedureCode: q.proc, ProviderNPI: v1Provider})
		require.NoError(t, err)
		code, auth := "I", "N"
		if res.Eligible {
			code = "1"
		}
		if res.RequiresAuthorization {
			auth = "Y"
		}
		want := fmt.Sprintf("EB*%s*IND*%s********%s**%s", code, q.stc, auth, q.eb13)
		i := indexOf(known, want)
		require.GreaterOrEqual(t, i, 0, "no %s in %v", want, known)
		tx := strings.TrimPrefix(known[i+1+boolInt(!res.Eligible)], "MSG*DECISION PROOF TRANSACTION ")
		st, err := e.a.Ledger.Statement(ctx, common.HexToHash(tx))
		require.NoError(t, err, "the 271's proof transaction is on chain")
		assert.Equal(t, "eligibility-v3", string(st.Kind))
		// The statement the 271 carries for it passes every check of
		// verify-decision against the chain.
		js, ok := statements[tx]
		require.True(t, ok, "no statement of %s in the 271", tx)
		var sst statement.Statement
		require.NoError(t, json.Unmarshal(js, &sst))
		rep, err := verify.Decision(ctx, chainOf(t, e), common.HexToHash(tx), verify.Options{Registry: e.a.Ledger.Registry(), Statement: &sst})
		require.NoError(t, err)
		require.True(t, rep.OK(), "%s", rep.String())
		require.False(t, rep.Incomplete())
		if res.Eligible {
			assert.Contains(t, known, fmt.Sprintf("EB*A*IND*%s*****%s*****%s", q.stc, fraction(100-res.CoveragePercentage), q.eb13))
			assert.Contains(t, known, fmt.Sprintf("EB*B*IND*%s***27*%s******%s", q.stc, strconv.FormatFloat(res.CopayAmount, 'f', -1, 64), q.eb13))
		}
	}

	// The CORE envelope: the same 270 answered in kind, with the same
	// decisions.
	status, env := postCORE(t, e, c, in, "f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, core.PayloadType271, env.PayloadType)
	assert.Equal(t, core.Success, env.ErrorCode)
	assert.Equal(t, "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", env.PayloadID)
	assert.Equal(t, "CLEARINGHOUSE", env.ReceiverID)
	assert.Equal(t, "HEALTHAGENTS", env.SenderID)
	again := x12test.RequireAccepted(t, env.Payload)[0].Segments()
	noProof := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if !strings.HasPrefix(l, "MSG*DECISION PROOF TRANSACTION") && !strings.HasPrefix(l, "MSG*DECISION STATEMENT") {
				out = append(out, l)
			}
		}
		return out
	}
	assert.Equal(t, noProof(known), noProof(ebs(again, "TRACE-KNOWN")), "the same decisions through the CORE envelope")
	assert.Equal(t, []string{"AAA*Y**75*C"}, ebs(again, "TRACE-UNKNOWN"))
}

// chainOf is the app's chain as a third party's verifier reads it.
func chainOf(t *testing.T, e *v1Env) verify.Chain {
	t.Helper()
	rc, ok := e.a.Ledger.RPCClient()
	require.True(t, ok, "the embedded chain answers JSON-RPC")
	return ethclient.NewClient(rc)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fraction(pct int) string {
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(float64(pct)/100, 'f', 2, 64), "0"), ".")
}

// postCORE sends a 270 in the CORE envelope with the client's key.
func postCORE(t *testing.T, e *v1Env, c interface{ BaseURL() string }, payload []byte, payloadID string) (int, *core.Envelope) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range [][2]string{{"PayloadType", core.PayloadType270}, {"ProcessingMode", core.RealTime}, {"PayloadID", payloadID},
		{"TimeStamp", time.Now().UTC().Format(time.RFC3339)}, {"SenderID", "CLEARINGHOUSE"}, {"ReceiverID", "HEALTHAGENTS"},
		{"CORERuleVersion", "2.2.0"}, {"Payload", string(payload)}} {
		if f[1] != "" {
			require.NoError(t, mw.WriteField(f[0], f[1]))
		}
	}
	require.NoError(t, mw.Close())
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/api/v1/eligibility/x12", &b)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.key(t, apikey.CreateParams{Organization: "clinic-x12"}))
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	require.NoError(t, err, "%d %s", resp.StatusCode, body)
	require.Equal(t, "multipart/form-data", mt, "%s", body)
	env, err := core.Read(body, params["boundary"])
	require.NoError(t, err)
	return resp.StatusCode, env
}

// TestX12BrokenRecordsNothing is the second "done when": each
// broken 270 gets the 999 or TA1 that names its fault, read by both npm
// parsers, and nothing is proven, recorded or emitted for any of them.
func TestX12BrokenRecordsNothing(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	att := &countedAttestor{Attestor: v1Attestor(t, v1SharedApp(t))}
	e := newV1EnvWithAttestor(t, db, att)
	ctx := t.Context()
	c := e.client(t, apikey.CreateParams{})
	require.NoError(t, c.PutPatient(ctx, e.seal(t, v1Record("PT-B", func(r *record.Record) { r.BirthDate = "1968-04-02" }))))
	day := time.Now().UTC()
	good := string(x12Request(day, "HL*3*2*22*0~TRN*1*T1*9CLEARHOUS~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~EQ*30"))
	rep := func(old, new string) string {
		require.Contains(t, good, old)
		return strings.Replace(good, old, new, 1)
	}
	cases := []struct {
		name, in, want string // want: the TA1's note (TA1*...*R*<want>) or a 999 line
	}{
		{"bad ISA length", rep("*CLEARINGHOUSE  *", "*CLEARINGHOUSE*"), "TA1:006"},
		{"wrong separators", rep("GS*HS*CLEARINGHOUSE", "GS|HS|CLEARINGHOUSE"), "TA1:024"},
		{"component separator equals element separator", rep("*T*:~", "*T***~"), "TA1:027"},
		{"IEA control mismatch", rep("IEA*1*000000729", "IEA*1*000000730"), "TA1:001"},
		{"GE control mismatch", rep("GE*1*729", "GE*1*730"), "AK9*R*1*1*1*4"},
		{"SE01 count", rep("SE*12*0001", "SE*11*0001"), "IK5*R*4"},
		{"missing NM1", rep("NM1*IL*1*DOE*JANE****MI*W123456789~\n", ""), "IK3*NM1*9*2100C*3"},
		{"bad date", rep("DMG*D8*19680402", "DMG*D8*19681302"), "IK4*2*1251*8"},
		{"bad date of service", rep("EQ*30", "DTP*291*D8*2026~\nEQ*30"), "IK4*3*1251*8"},
		{"unknown service type", rep("EQ*30", "EQ*Q9"), "IK4*1::1*1365*7"},
		{"another implementation guide", rep("ST*270*0001*005010X279A1", "ST*270*0001*005010X092A1"), "IK5*R*I6"},
		{"segment not in a 270", rep("EQ*30", "EQ*30~\nCLM*1"), "IK3*CLM*12*2000C*6"},
	}
	var outs [][]byte
	for _, tc := range cases {
		out, err := c.EligibilityX12(ctx, []byte(tc.in))
		require.NoError(t, err, tc.name)
		outs = append(outs, out)
	}
	reports := x12test.RequireAccepted(t, outs...)
	for i, tc := range cases {
		r := reports[i]
		if note, ok := strings.CutPrefix(tc.want, "TA1:"); ok {
			if assert.Len(t, r.NodeX12.TA1, 6, tc.name) {
				assert.Equal(t, note, r.NodeX12.TA1[5], tc.name)
			}
			continue
		}
		var lines []string
		for _, s := range r.Segments() {
			lines = append(lines, strings.Join(s, "*"))
		}
		assert.Contains(t, lines, tc.want, tc.name)
		assert.Equal(t, "999", r.NodeX12.Groups[0].Transactions[0].Header[1], tc.name)
	}
	assert.Zero(t, att.n.Load(), "nothing proven or recorded on chain")
	assert.Zero(t, e.events.count(healthagents.EventEligibilityVerified), "nothing emitted")
	// The good one is decided (the table's faults, not the patient, were
	// refused).
	out, err := c.EligibilityX12(ctx, []byte(good))
	require.NoError(t, err)
	assert.Contains(t, string(out), "EB*1*IND*30")
	assert.Equal(t, int64(5), att.n.Load(), "service type 30: every class of the catalogue")
}

// TestX12Refusals: HTTP-level refusals answered in X12 (or JSON for
// 401/403 and an unsupported media type), and the CORE envelope's errors.
func TestX12Refusals(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	att := &countedAttestor{Attestor: v1Attestor(t, v1SharedApp(t))}
	e := newV1EnvWithAttestor(t, db, att)
	ctx := t.Context()
	admin := e.client(t, apikey.CreateParams{Organization: "clinic-r"})
	require.NoError(t, admin.PutPatient(ctx, e.seal(t, v1Record("PT-R", func(r *record.Record) { r.BirthDate = "1968-04-02" }))))
	day := time.Now().UTC()
	sub := "HL*3*2*22*0~TRN*1*T1*9CLEARHOUS~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~"
	three := x12Request(day, sub+"EQ*4~EQ*5~EQ*2")

	// A key of 2 decisions a day asking three: more than its limits ever
	// admit in one request, AAA 04 "correct and resubmit" (split it),
	// nothing decided.
	small := e.client(t, apikey.CreateParams{Tier: apikey.Pro, DailyQuota: 2, Organization: "clinic-r"})
	out, err := small.EligibilityX12(ctx, three)
	require.NoError(t, err)
	assert.Contains(t, string(out), "AAA*Y**04*C")
	assert.Zero(t, att.n.Load())
	// A key of 3 a day: one question, then three (refused by the limits:
	// 429, AAA 04 "resubmission allowed"), then one more fits, and the
	// next is refused by the gate before the handler, in X12 too.
	pro := e.client(t, apikey.CreateParams{Tier: apikey.Pro, DailyQuota: 3, Organization: "clinic-r"})
	one := x12Request(day, sub+"EQ*4")
	_, err = pro.EligibilityX12(ctx, one)
	require.NoError(t, err)
	out, err = pro.EligibilityX12(ctx, three)
	status, _ := v1Code(t, err)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Contains(t, string(out), "AAA*Y**04*R")
	assert.Equal(t, int64(1), att.n.Load(), "the refused three were not decided")
	_, err = pro.EligibilityX12(ctx, one)
	require.NoError(t, err)
	out, err = pro.EligibilityX12(ctx, one)
	status, _ = v1Code(t, err)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Contains(t, string(out), "AAA*Y**04*R")
	x12test.RequireAccepted(t, out)
	assert.Equal(t, int64(2), att.n.Load())

	// No key: 401 with {"detail"}, as on every route.
	anon, err := client.New(e.url, client.WithMaxAttempts(1))
	require.NoError(t, err)
	_, err = anon.EligibilityX12(ctx, three)
	status, _ = v1Code(t, err)
	assert.Equal(t, http.StatusUnauthorized, status)

	// CORE envelope errors: 400 CoreEnvelopeError naming the field.
	c := e.client(t, apikey.CreateParams{Organization: "clinic-r"})
	st, env := postCORE(t, e, c, three, "not-a-uuid")
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, core.PayloadTypeError, env.PayloadType)
	assert.Equal(t, "PayloadIDInvalid", env.ErrorCode)
	// A broken 270 in a good envelope: the 999 in the envelope.
	st, env = postCORE(t, e, c, bytes.Replace(three, []byte("EQ*4"), []byte("EQ*QQ"), 1), "f81d4fae-7dec-11d0-a765-00a0c91e6bf7")
	assert.Equal(t, http.StatusOK, st)
	assert.Equal(t, core.PayloadType999, env.PayloadType)
	x12test.RequireAccepted(t, env.Payload)
}

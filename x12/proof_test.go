package x12_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/healthagents/healthagents/x12"
	"github.com/healthagents/healthagents/x12/x12test"
)

// proofData is a proof_data of eight words below the field modulus (the
// encoder does not check the curve: verify.ParseCompressedProof does, and
// verify's tests run real proofs through both).
var proofData = "0x" + strings.Repeat("1f", 32) + strings.Repeat("2e", 32) + strings.Repeat("03", 32) + strings.Repeat("04", 32) +
	strings.Repeat("05", 32) + strings.Repeat("06", 32) + strings.Repeat("07", 32) + strings.Repeat("08", 32)

// batchedStatement is EncodeStatement's text of a statement needing n MSG
// segments: incompressible text of a given length.
func batchedStatement(t *testing.T, n int) string {
	t.Helper()
	// Pseudo-random numbers deflate poorly: add them until n parts.
	var b strings.Builder
	b.WriteString(`{"digest":"1","batch":{"path":[`)
	x := uint64(88172645463325252)
	for i := 0; ; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + uitoa(x) + `"`)
		text, err := x12.EncodeStatement([]byte(b.String() + `]}}`))
		if err != nil {
			t.Fatal(err)
		}
		if parts := (len(text) + 229) / 230; parts == n {
			return text
		} else if parts > n {
			t.Fatalf("no statement of exactly %d parts", n)
		}
	}
}

func uitoa(x uint64) string {
	var d []byte
	for ; x > 0 || len(d) == 0; x /= 10 {
		d = append([]byte{byte('0' + x%10)}, d...)
	}
	return string(d)
}

// TestProofInA271: a batched decision's 271 carries its statement and, in
// one MSG*DECISION PROOF DATA after it, its proof (171 characters: the
// three points compressed), which Decisions reads back for its
// transaction and DecodeProof decodes; both npm parsers accept the
// interchange, every MSG01 within 264 characters.
func TestProofInA271(t *testing.T) {
	t.Parallel()
	inq, resps := answers(t)
	text, err := x12.EncodeProof(proofData)
	if err != nil {
		t.Fatal(err)
	}
	if len(text) != 171 {
		t.Fatalf("the proof's text is %d characters, want 171", len(text))
	}
	b := &resps[0].Sources[0].Receivers[0].Subscribers[0].Benefits[0]
	b.Statement, b.Proof = batchedStatement(t, 8), text
	out, err := x12.Render271s(inq, x12.Reply{Control: 1, Time: time.Now()}, resps)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "MSG*DECISION STATEMENT 8/8 ") || !strings.Contains(string(out), "~\nMSG*DECISION PROOF DATA "+text+"~\nEB*A*") {
		t.Fatalf("no proof after the statement's eighth part:\n%s", out)
	}
	ds, err := x12.Decisions(out)
	if err != nil {
		t.Fatal(err)
	}
	d := ds[b.ProofTransaction]
	if !d.HasProof || d.Proof != text || d.Statement == nil {
		t.Fatalf("read back %+v", d)
	}
	if _, ok := ds[resps[0].Sources[0].Receivers[0].Subscribers[0].Benefits[1].ProofTransaction]; ok {
		t.Fatal("a decision with no statement and no proof has an entry")
	}
	raw, err := x12.DecodeProof(d.Proof)
	if err != nil || len(raw) != x12.CompressedProofSize {
		t.Fatalf("DecodeProof: %d bytes, %v", len(raw), err)
	}
	reports := x12test.RequireAccepted(t, out)
	msgs := 0
	for _, s := range reports[0].Segments() {
		if s[0] == "MSG" {
			msgs++
			if len(s[1]) > 264 {
				t.Errorf("MSG01 of %d characters: %s", len(s[1]), s[1])
			}
		}
	}
	if msgs < 11 {
		t.Fatalf("node-x12 read %d MSG", msgs)
	}
}

// TestRender271CarriesStatementAndProof: the one-question 271 (the
// `healthagents x12 271` command's) carries a decision's statement and
// proof after its transaction as Render271s does, Decisions reads them
// back, and what cannot be carried is refused, not dropped.
func TestRender271CarriesStatementAndProof(t *testing.T) {
	t.Parallel()
	ic := x12.Interchange{SenderID: "HEALTHAGENTS", ReceiverID: "CLEARINGHOUSE", Control: 7, Time: at}
	text, err := x12.EncodeProof(proofData)
	if err != nil {
		t.Fatal(err)
	}
	e := sample(false) // with a reason, in the procedure's loop
	e.Statement, e.Proof = batchedStatement(t, 8), text
	out, err := x12.Render271(ic, e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "MSG*DECISION PROOF TRANSACTION "+e.ProofTransaction+"~\nMSG*DECISION STATEMENT 1/8 ") ||
		!strings.Contains(string(out), "~\nMSG*DECISION PROOF DATA "+text+"~\nSE*") {
		t.Fatalf("statement and proof not after the transaction:\n%s", out)
	}
	ds, err := x12.Decisions(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[e.ProofTransaction]; !d.HasProof || d.Proof != text || d.Statement == nil {
		t.Fatalf("read back %+v", d)
	}
	x12test.RequireAccepted(t, out)

	for name, mut := range map[string]func(*x12.Eligibility){
		"statement without a transaction": func(e *x12.Eligibility) { e.ProofTransaction = "" },
		"proof without a statement":       func(e *x12.Eligibility) { e.Statement = "" },
		"statement with a separator":      func(e *x12.Eligibility) { e.Statement += "*" },
		"statement of 9 parts":            func(e *x12.Eligibility) { e.Statement += strings.Repeat("A", 230) },
		"not a proof":                     func(e *x12.Eligibility) { e.Proof = e.Proof[:170] },
	} {
		bad := e
		mut(&bad)
		if _, err := x12.Render271(ic, bad); !errors.Is(err, x12.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestProofRefused: a proof the 271 cannot carry is refused, never
// dropped: one whose loop would hold 11 MSG (a reason, the transaction, an
// 8-part statement and the proof), one with no statement, one that is not
// EncodeProof's text; EncodeProof refuses what is not proof_data.
func TestProofRefused(t *testing.T) {
	t.Parallel()
	text, err := x12.EncodeProof(proofData)
	if err != nil {
		t.Fatal(err)
	}
	eight := batchedStatement(t, 8)
	for name, tc := range map[string]struct {
		b    x12.Benefit
		want string
	}{
		"fail/11 MSG": {x12.Benefit{Procedure: "PROC005", Reason: "excluded", ProofTransaction: "0x01", Statement: eight, Proof: text},
			"the decision needs 11 MSG segments (reason, proof transaction, 8 statement parts, proof), a 2110 loop holds 10"},
		"fail/no statement": {x12.Benefit{Procedure: "PROC001", Eligible: true, ProofTransaction: "0x01", Proof: text}, "after its statement"},
		"fail/not its text": {x12.Benefit{Procedure: "PROC001", Eligible: true, ProofTransaction: "0x01", Statement: eight, Proof: text[:170] + "B"}, "EncodeProof's text"},
	} {
		t.Run(name, func(t *testing.T) {
			inq, resps := answers(t)
			resps[0].Sources[0].Receivers[0].Subscribers[0].Benefits[0] = tc.b
			_, err := x12.Render271s(inq, x12.Reply{Control: 1, Time: time.Now()}, resps)
			if !errors.Is(err, x12.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	// Eligible (no reason): transaction, 8 parts and the proof are 10.
	ok := x12.Benefit{Procedure: "PROC001", Eligible: true, ProofTransaction: "0x01", Statement: eight, Proof: text}
	if err := ok.CheckMessages(); err != nil {
		t.Fatal(err)
	}
	for _, pd := range []string{"", "0x01", proofData[2:], proofData[:len(proofData)-2] + "zz", "0x" + strings.Repeat("ff", 256)} {
		if _, err := x12.EncodeProof(pd); !errors.Is(err, x12.ErrInvalid) {
			t.Errorf("EncodeProof(%.12q...): got %v", pd, err)
		}
	}
}

// batched271 renders a 271 whose first benefit carries a batched
// decision's statement and proof; it returns the 271, the proof's MSG text
// and the benefit.
func batched271(t *testing.T) ([]byte, string, *x12.Benefit) {
	t.Helper()
	text, err := x12.EncodeProof(proofData)
	if err != nil {
		t.Fatal(err)
	}
	inq, resps := answers(t)
	b := &resps[0].Sources[0].Receivers[0].Subscribers[0].Benefits[0]
	b.Statement, b.Proof = batchedStatement(t, 2), text
	out, err := x12.Render271s(inq, x12.Reply{Control: 1, Time: time.Now()}, resps)
	if err != nil {
		t.Fatal(err)
	}
	return out, text, b
}

// TestDecisionsProof: a second proof after one transaction is refused;
// a proof that is not one is read as received and refused by DecodeProof
// (so its reader names the proof), as is a non-canonical last character.
func TestDecisionsProof(t *testing.T) {
	t.Parallel()
	out, text, b := batched271(t)
	line := "MSG*DECISION PROOF DATA " + text + "~"
	twice := strings.Replace(string(out), line, line+"\n"+line, 1)
	if _, err := x12.Decisions([]byte(twice)); !errors.Is(err, x12.ErrInvalid) || !strings.Contains(err.Error(), "a second MSG*DECISION PROOF DATA") {
		t.Fatalf("two proofs: got %v", err)
	}
	// The last character's two unused bits set: the same bytes in
	// lenient base64, but not the proof's one text.
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", text[170])
	noncanonical := text[:170] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|1])
	for name, bad := range map[string]string{"short": text[:100], "not base64url": text[:170] + "*", "unused bits set": noncanonical} {
		in := strings.Replace(string(out), line, "MSG*DECISION PROOF DATA "+bad+"~", 1)
		ds, err := x12.Decisions([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := ds[b.ProofTransaction]
		if !d.HasProof || d.Statement == nil {
			t.Fatalf("%s: read %+v", name, d)
		}
		if _, err := x12.DecodeProof(d.Proof); !errors.Is(err, x12.ErrInvalid) {
			t.Errorf("%s: DecodeProof got %v", name, err)
		}
	}
}

// trailerWord is in every error of an envelope's trailer check.
var trailerWord = regexp.MustCompile(`\b(SE|GE|IEA)\b`)

// TestDecisionsChecksTheSetTrailer: a 271 whose transaction set lost or
// gained a segment (SE01 no longer counts it), whose SE names another set
// (SE02), whose GE or IEA miscounts or names another header, or that was
// cut before its SE or IEA is refused, not read as far as it goes; the 271
// as rendered is read.
func TestDecisionsChecksTheSetTrailer(t *testing.T) {
	t.Parallel()
	out, text, b := batched271(t)
	if ds, err := x12.Decisions(out); err != nil || !ds[b.ProofTransaction].HasProof {
		t.Fatalf("as rendered: %v, %+v", err, ds)
	}
	doc := string(out)
	proofLine := "MSG*DECISION PROOF DATA " + text + "~\n"
	se := regexp.MustCompile(`(?m)^SE\*(\d+)\*(\w+)~$`)
	m := se.FindStringSubmatch(doc)
	ge := regexp.MustCompile(`(?m)^GE\*(\d+)\*(\w+)~$`).FindStringSubmatch(doc)
	iea := regexp.MustCompile(`(?m)^IEA\*(\d+)\*(\w+)~$`).FindStringSubmatch(doc)
	if m == nil || ge == nil || iea == nil {
		t.Fatal("no SE, GE or IEA in the rendered 271")
	}
	for name, bad := range map[string]string{
		"a segment lost":   strings.Replace(doc, proofLine, "", 1),
		"a segment added":  strings.Replace(doc, proofLine, proofLine+"MSG*NOTE~\n", 1),
		"SE02 of another":  strings.Replace(doc, m[0], "SE*"+m[1]+"*9"+m[2]+"~", 1),
		"cut before SE":    doc[:strings.Index(doc, proofLine)+len(proofLine)],
		"GE01 miscounted":  strings.Replace(doc, ge[0], "GE*9"+ge[1]+"*"+ge[2]+"~", 1),
		"GE02 of another":  strings.Replace(doc, ge[0], "GE*"+ge[1]+"*9"+ge[2]+"~", 1),
		"no GE":            strings.Replace(doc, ge[0]+"\n", "", 1),
		"IEA01 miscounted": strings.Replace(doc, iea[0], "IEA*9"+iea[1]+"*"+iea[2]+"~", 1),
		"IEA02 of another": strings.Replace(doc, iea[0], "IEA*"+iea[1]+"*"+strings.Repeat("9", len(iea[2]))+"~", 1),
		"cut before IEA":   doc[:strings.Index(doc, iea[0])],
	} {
		if _, err := x12.Decisions([]byte(bad)); !errors.Is(err, x12.ErrInvalid) || !trailerWord.MatchString(err.Error()) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// FuzzDecisions: whatever a 271 holds, Decisions and DecodeProof return an
// answer or x12.ErrInvalid, never a panic; a proof DecodeProof accepts is
// CompressedProofSize bytes, and a statement read is what inflated.
func FuzzDecisions(f *testing.F) {
	inq, resps := answers(f)
	text, err := x12.EncodeProof(proofData)
	if err != nil {
		f.Fatal(err)
	}
	st, err := x12.EncodeStatement([]byte(`{"digest":"1","batch":{"path":["7"]}}`))
	if err != nil {
		f.Fatal(err)
	}
	b := &resps[0].Sources[0].Receivers[0].Subscribers[0].Benefits[0]
	b.Statement, b.Proof = st, text
	out, err := x12.Render271s(inq, x12.Reply{Control: 1, Time: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}, resps)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(out)
	f.Add([]byte(strings.Replace(string(out), "PROOF DATA "+text[:20], "PROOF DATA ", 1)))
	f.Fuzz(func(t *testing.T, in []byte) {
		ds, err := x12.Decisions(in)
		if err != nil {
			if !errors.Is(err, x12.ErrInvalid) {
				t.Fatalf("not ErrInvalid: %v", err)
			}
			return
		}
		for tx, d := range ds {
			if !d.HasProof && d.Statement == nil {
				t.Fatalf("%s: an entry with nothing", tx)
			}
			if d.HasProof {
				raw, err := x12.DecodeProof(d.Proof)
				if err == nil && len(raw) != x12.CompressedProofSize {
					t.Fatalf("%s: a %d-byte proof", tx, len(raw))
				}
				if err != nil && !errors.Is(err, x12.ErrInvalid) {
					t.Fatalf("not ErrInvalid: %v", err)
				}
			}
		}
	})
}

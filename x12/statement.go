package x12

// A decision's statement inside a 271: the MSG segments after the proof
// transaction's carry the statement's JSON (docs/statement.md), deflated
// and in base64url, so that whoever holds the 271 can have
// verify-decision check what the EB segments say against the chain.

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

const (
	proofMessage     = "DECISION PROOF TRANSACTION "
	statementMessage = "DECISION STATEMENT "
	// statementChunk is the statement text one MSG carries: MSG01 is at
	// most 264 characters, with "DECISION STATEMENT 10/10 " in front.
	statementChunk = 230
	// maxStatementMessages leaves room in a 2110 loop (10 MSG at most)
	// for the reason and the proof transaction.
	maxStatementMessages = 8
	// maxStatementJSON bounds what Statements inflates.
	maxStatementJSON = 64 << 10
)

// EncodeStatement is the text the 271 carries for a statement's JSON: the
// JSON deflated, in unpadded base64url (letters, digits, - and _: X12's
// extended character set, none of them a separator).
func EncodeStatement(statementJSON []byte) (string, error) {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(statementJSON); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	text := base64.RawURLEncoding.EncodeToString(b.Bytes())
	if (len(text)+statementChunk-1)/statementChunk > maxStatementMessages {
		return "", fmt.Errorf("%w: the statement needs more than %d MSG segments", ErrInvalid, maxStatementMessages)
	}
	return text, nil
}

// statementMessages writes text as MSG*DECISION STATEMENT i/n <chunk>.
func (w *writer) statementMessages(text string) {
	n := (len(text) + statementChunk - 1) / statementChunk
	for i := 0; i < n; i++ {
		chunk := text[i*statementChunk : min(len(text), (i+1)*statementChunk)]
		w.seg("MSG", statementMessage+strconv.Itoa(i+1)+"/"+strconv.Itoa(n)+" "+chunk)
	}
}

// Decision is what a 271 carries of one decision beside its EB segments,
// after its MSG*DECISION PROOF TRANSACTION.
type Decision struct {
	// Statement is the statement's JSON, from the MSG*DECISION STATEMENT
	// segments; nil without them.
	Statement []byte
	// Proof is the text of the MSG*DECISION PROOF DATA (EncodeProof's, as
	// received: DecodeProof reads it); HasProof says there was one (none:
	// a single-record decision, whose proof is in its transaction).
	Proof    string
	HasProof bool
}

// Statements reads the decisions a 271 carries: for each MSG*DECISION PROOF
// TRANSACTION, the transaction hash and the statement JSON of the MSG*DECISION
// STATEMENT segments after it (none: no entry).
func Statements(interchange []byte) (map[string][]byte, error) {
	ds, err := Decisions(interchange)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for tx, d := range ds {
		if d.Statement != nil {
			out[tx] = d.Statement
		}
	}
	return out, nil
}

// Decisions reads the decisions a 271 carries, by transaction hash: for
// each MSG*DECISION PROOF TRANSACTION, the statement of the MSG*DECISION
// STATEMENT segments and the proof of the MSG*DECISION PROOF DATA after it,
// up to the next EB or SE (neither: no entry). The envelope is read as the
// 270 reader reads it (readInterchange). A statement missing parts or with
// a part out of order, a second proof after one transaction, an envelope
// that does not read, whose trailer does not count what it holds or name
// its header's control number (SE, GE, IEA), or a 271 cut before one, is
// an error; the proof's text is left to DecodeProof, so that its reader
// names the proof when it is not one.
func Decisions(interchange []byte) (map[string]Decision, error) {
	ic, ierr := readInterchange(interchange)
	if ic == nil {
		return nil, fmt.Errorf("%w: the 271's envelope (ISA, GS, GE or IEA) is not whole", ierr)
	}
	out := map[string]Decision{}
	tx := ""
	var parts []string
	proof, hasProof := "", false
	want := 0
	flush := func() error {
		if tx == "" || (want == 0 && !hasProof) {
			return nil
		}
		d := Decision{Proof: proof, HasProof: hasProof}
		if want != 0 {
			if len(parts) != want {
				return fmt.Errorf("%w: the statement of %s has %d of its %d parts", ErrInvalid, tx, len(parts), want)
			}
			js, err := decodeStatement(strings.Join(parts, ""))
			if err != nil {
				return fmt.Errorf("the statement of %s: %w", tx, err)
			}
			d.Statement = js
		}
		out[tx] = d
		return nil
	}
	var segs []segment
	for _, g := range ic.groups {
		for _, t := range g.sets {
			segs = append(segs, t.segs...)
		}
	}
	for _, seg := range segs {
		s := seg.el
		if s[0] != "MSG" || len(s) < 2 {
			if s[0] == "EB" || s[0] == "SE" {
				if err := flush(); err != nil {
					return nil, err
				}
				tx, parts, proof, hasProof, want = "", nil, "", false, 0
			}
			continue
		}
		switch m := s[1]; {
		case strings.HasPrefix(m, proofMessage):
			if err := flush(); err != nil {
				return nil, err
			}
			tx, parts, proof, hasProof, want = strings.TrimPrefix(m, proofMessage), nil, "", false, 0
		case strings.HasPrefix(m, statementMessage) && tx != "":
			var i, n int
			var chunk string
			if _, err := fmt.Sscanf(strings.TrimPrefix(m, statementMessage), "%d/%d %s", &i, &n, &chunk); err != nil || i != len(parts)+1 || n < 1 || n > maxStatementMessages || (want != 0 && n != want) {
				return nil, fmt.Errorf("%w: a malformed MSG*DECISION STATEMENT after %s", ErrInvalid, tx)
			}
			want = n
			parts = append(parts, chunk)
		case strings.HasPrefix(m, proofDataMessage) && tx != "":
			if hasProof {
				return nil, fmt.Errorf("%w: a second MSG*DECISION PROOF DATA after %s", ErrInvalid, tx)
			}
			proof, hasProof = strings.TrimPrefix(m, proofDataMessage), true
		}
	}
	if err := wholeInterchange(ic, ierr); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// wholeInterchange refuses an interchange read by readInterchange (ic,
// with ierr when it ends without its IEA) that was cut before one of its
// trailers, or whose trailers do not count
// what they hold or name their header's control number (SE, GE, IEA). A
// group's other findings (its GS01 is a 270's HS, not a 271's HB) are the
// 270 reader's business. Its errors name control numbers and counts only.
func wholeInterchange(ic *interchange, ierr *InterchangeError) error {
	cut := ierr != nil // with ic: readInterchange's 023, no IEA
	for _, g := range ic.groups {
		for _, t := range g.sets {
			if !t.hasSE {
				return noTrailer("transaction set", t.control(), "SE", "ST, GE or IEA", cut)
			}
			if slices.Contains(t.errors, "3") || slices.Contains(t.errors, "4") {
				return fmt.Errorf("%w: transaction set %s has %d segments from ST to SE, and its SE does not say so (SE01 the count, SE02 the ST02)", ErrInvalid, t.control(), len(t.segs))
			}
		}
		if !g.hasGE {
			return noTrailer("group", g.control(), "GE", "GS or IEA", cut)
		}
		if slices.Contains(g.errors, "4") || slices.Contains(g.errors, "5") {
			return fmt.Errorf("%w: group %s has %d transaction sets, and its GE does not say so (GE01 the count, GE02 the GS06)", ErrInvalid, g.control(), len(g.sets))
		}
	}
	if cut {
		return noTrailer("interchange", ic.env.Control, "IEA", "", cut)
	}
	return nil
}

// noTrailer is the error for a transaction set, group or interchange
// (what, with its control number ctl) read without its trailer: the 271
// was cut when it ends without an IEA, else the trailer is missing before
// the next header or trailer (next).
func noTrailer(what, ctl, trailer, next string, cut bool) error {
	if cut {
		return fmt.Errorf("%w: %s %s has no %s: the 271 was cut", ErrInvalid, what, ctl, trailer)
	}
	return fmt.Errorf("%w: %s %s has no %s before the next %s", ErrInvalid, what, ctl, trailer, next)
}

func decodeStatement(text string) ([]byte, error) {
	z, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64url", ErrInvalid)
	}
	js, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), maxStatementJSON+1))
	if err != nil || len(js) > maxStatementJSON {
		return nil, fmt.Errorf("%w: the statement does not inflate", ErrInvalid)
	}
	return js, nil
}

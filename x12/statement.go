package x12

// A decision's statement inside a 271: the MSG segments after the proof
// transaction's carry the statement's JSON (docs/statement.md), deflated
// and in base64url, so that whoever holds the 271 can have
// verify-decision check what the EB segments say against the chain.

import (
	"bytes"
	"cmp"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"io"
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
// up to the next EB or SE (neither: no entry). A statement missing parts
// or with a part out of order, a second proof after one transaction, an
// envelope whose trailer does not count what it holds or name its header's
// control number (SE, GE, IEA), or a 271 cut before one, is an error; the proof's text is left to DecodeProof, so that its
// reader names the proof when it is not one.
func Decisions(interchange []byte) (map[string]Decision, error) {
	segs, err := Split(interchange)
	if err != nil {
		return nil, err
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
	var tr trailers
	for _, s := range segs {
		if err := tr.see(s); err != nil {
			return nil, err
		}
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
	if err := tr.end(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// trailers checks, segment by segment, that an interchange's envelopes
// close as they open: each SE counts its transaction set's segments from
// ST (SE01) and names its ST02, each GE counts its group's sets (GE01) and
// names its GS06, each IEA counts the groups (IEA01) and names ISA13, and
// the text does not end inside any of them. Its errors name control
// numbers and counts only.
type trailers struct {
	set      string // ST02 of the open transaction set; "" when none is open
	segments int    // the open set's segments so far, ST included
	group    string // GS06 of the open group
	sets     int    // the open group's sets so far
	inGroup  bool
	isa      string // ISA13 of the open interchange
	groups   int    // the open interchange's groups so far
	inISA    bool
}

// see reads the next segment s.
func (tr *trailers) see(s []string) error {
	el := func(i int) string {
		if i < len(s) {
			return strings.TrimSpace(s[i])
		}
		return ""
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
	}
	switch s[0] {
	case "ISA":
		if tr.inISA {
			return bad("interchange %s has no IEA before the next ISA", tr.isa)
		}
		tr.inISA, tr.isa, tr.groups = true, el(13), 0
	case "GS":
		if tr.inGroup {
			return bad("group %s has no GE before the next GS", tr.group)
		}
		tr.inGroup, tr.group, tr.sets = true, el(6), 0
		tr.groups++
	case "ST":
		if tr.set != "" {
			return bad("transaction set %s has no SE before the next ST", tr.set)
		}
		tr.set, tr.segments = cmp.Or(el(2), "?"), 0
		tr.sets++
	case "SE":
		if tr.set == "" {
			return bad("an SE outside a transaction set")
		}
		tr.segments++
		if el(1) != strconv.Itoa(tr.segments) || el(2) != tr.set {
			return bad("transaction set %s has %d segments from ST to SE, and its SE does not say so (SE01 the count, SE02 the ST02)", tr.set, tr.segments)
		}
		tr.set = ""
	case "GE":
		if tr.set != "" || !tr.inGroup {
			return bad("a GE outside a group, or before its transaction set's SE")
		}
		if el(1) != strconv.Itoa(tr.sets) || el(2) != tr.group {
			return bad("group %s has %d transaction sets, and its GE does not say so (GE01 the count, GE02 the GS06)", tr.group, tr.sets)
		}
		tr.inGroup = false
	case "IEA":
		if tr.inGroup || !tr.inISA {
			return bad("an IEA outside an interchange, or before its group's GE")
		}
		if el(1) != strconv.Itoa(tr.groups) || el(2) != tr.isa {
			return bad("interchange %s has %d groups, and its IEA does not say so (IEA01 the count, IEA02 the ISA13)", tr.isa, tr.groups)
		}
		tr.inISA = false
	}
	if tr.set != "" {
		tr.segments++
	}
	return nil
}

// end reports a text that ended inside an envelope.
func (tr *trailers) end() error {
	switch {
	case tr.set != "":
		return fmt.Errorf("%w: transaction set %s has no SE: the 271 was cut", ErrInvalid, tr.set)
	case tr.inGroup:
		return fmt.Errorf("%w: group %s has no GE: the 271 was cut", ErrInvalid, tr.group)
	case tr.inISA:
		return fmt.Errorf("%w: interchange %s has no IEA: the 271 was cut", ErrInvalid, tr.isa)
	}
	return nil
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

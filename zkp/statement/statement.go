package statement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"

	"github.com/iden3/go-iden3-crypto/poseidon"
)

// Width is the most inputs one iden3 Poseidon call takes: the digest hashes
// its values in chunks of Width.
const Width = 16

// MaxFields is the most values a digest covers: Width chunks of Width.
const MaxFields = Width * Width

// Errors of a statement that does not hold.
var (
	// ErrMalformed is a statement that cannot be read: a value that is not
	// a decimal field element, no fields, too many fields.
	ErrMalformed = errors.New("statement: malformed")
	// ErrDigestMismatch is an opening whose recomputed digest is not the
	// statement's.
	ErrDigestMismatch = errors.New("statement: the digest recomputed from the opening differs from the stated digest")
)

// fieldModulus is the BN254 scalar field modulus, Poseidon's field.
var fieldModulus, _ = new(big.Int).SetString("21888242871839275222246405745257275088548364400416034343698204186575808495617", 10)

// Field is one element of the opening: its name (docs/statement.md lists
// them per circuit), its value as a field element and, when the value
// encodes something readable (a code, a date, an amount), that text.
type Field struct {
	Name  string
	Value *big.Int
	Text  string
}

// Opening is the list the digest is computed over, with what the proof was
// made under: the circuit (its chain kind name and id), the issuer key hash
// and the credential's revocation nonce.
type Opening struct {
	Circuit         string
	CircuitID       *big.Int
	IssuerKeyHash   *big.Int
	RevocationNonce uint64
	Fields          []Field
}

// Statement is a decision's digest and its opening and, for a decision
// anchored in a batch, where its leaf sits in the batch (nil when the
// decision's transaction recorded it alone).
type Statement struct {
	Digest  *big.Int
	Opening Opening
	Batch   *Batch
}

// Values returns the opening's field values in order.
func (o Opening) Values() []*big.Int {
	v := make([]*big.Int, len(o.Fields))
	for i, f := range o.Fields {
		v[i] = f.Value
	}
	return v
}

// Get returns the value of the field named name, or nil.
func (o Opening) Get(name string) *big.Int {
	for _, f := range o.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// Digest is the statement digest of values: iden3's Poseidon over them when
// there are at most 16, else Poseidon over each chunk of 16 (the last one
// shorter) and then Poseidon over the chunk hashes.
func Digest(values []*big.Int) (*big.Int, error) {
	if len(values) == 0 || len(values) > MaxFields {
		return nil, fmt.Errorf("%w: a digest covers 1 to %d values, not %d", ErrMalformed, MaxFields, len(values))
	}
	for i, v := range values {
		if v == nil || v.Sign() < 0 || v.Cmp(fieldModulus) >= 0 {
			return nil, fmt.Errorf("%w: value %d is not a field element", ErrMalformed, i)
		}
	}
	if len(values) <= Width {
		return poseidon.Hash(values)
	}
	chunks := make([]*big.Int, 0, (len(values)+Width-1)/Width)
	for i := 0; i < len(values); i += Width {
		h, err := poseidon.Hash(values[i:min(i+Width, len(values))])
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, h)
	}
	return poseidon.Hash(chunks)
}

// New returns the statement of an opening: its digest computed.
func New(o Opening) (Statement, error) {
	d, err := o.Recompute()
	if err != nil {
		return Statement{}, err
	}
	return Statement{Digest: d, Opening: o}, nil
}

// Recompute is the digest of the opening's values.
func (o Opening) Recompute() (*big.Int, error) {
	return Digest(o.Values())
}

// Check recomputes the digest from the opening and compares it with the
// stated one: ErrDigestMismatch if they differ.
func (s Statement) Check() error {
	if s.Digest == nil {
		return fmt.Errorf("%w: no digest", ErrMalformed)
	}
	d, err := s.Opening.Recompute()
	if err != nil {
		return err
	}
	if d.Cmp(s.Digest) != 0 {
		return ErrDigestMismatch
	}
	return nil
}

// String prints the digest and the circuit; never the opening.
func (s Statement) String() string {
	return fmt.Sprintf("statement{digest %s, %s}", hex(s.Digest), s.Opening)
}

// GoString is String: %#v must not print the opening either.
func (s Statement) GoString() string { return s.String() }

// LogValue logs the digest and the circuit; never the opening.
func (s Statement) LogValue() slog.Value {
	return slog.GroupValue(slog.String("digest", hex(s.Digest)), slog.String("circuit", s.Opening.Circuit))
}

// String prints the circuit and how many fields the opening has; never
// their values.
func (o Opening) String() string {
	return fmt.Sprintf("opening{circuit %s, %d fields redacted}", o.Circuit, len(o.Fields))
}

// GoString is String.
func (o Opening) GoString() string { return o.String() }

// LogValue logs the circuit only.
func (o Opening) LogValue() slog.Value {
	return slog.GroupValue(slog.String("circuit", o.Circuit), slog.String("fields", "redacted"))
}

// String prints the field's name only.
func (f Field) String() string { return "field{" + f.Name + " redacted}" }

// GoString is String.
func (f Field) GoString() string { return f.String() }

// LogValue logs the field's name only.
func (f Field) LogValue() slog.Value { return slog.StringValue(f.String()) }

func hex(x *big.Int) string {
	if x == nil {
		return "(none)"
	}
	return fmt.Sprintf("0x%064x", x)
}

// The JSON form: every field element a decimal string (docs/statement.md).

type fieldJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Text  string `json:"text,omitempty"`
}

type openingJSON struct {
	Circuit         string      `json:"circuit"`
	CircuitID       string      `json:"circuit_id"`
	IssuerKeyHash   string      `json:"issuer_key_hash"`
	RevocationNonce uint64      `json:"revocation_nonce"`
	Fields          []fieldJSON `json:"fields"`
}

type statementJSON struct {
	Digest  string  `json:"digest"`
	Opening Opening `json:"opening"`
	Batch   *Batch  `json:"batch,omitempty"`
}

func dec(x *big.Int) string {
	if x == nil {
		return ""
	}
	return x.String()
}

// parseDec reads a field element written as docs/statement.md says: plain
// decimal digits, no sign, no leading zero, below the field modulus. Any
// other spelling ("+7", "007", "0x1f", " 7") is refused: a value must read
// the same to every checker and every person.
func parseDec(what, s string, optional bool) (*big.Int, error) {
	if s == "" && optional {
		return nil, nil
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || !canonicalDecimal(s) || v.Cmp(fieldModulus) >= 0 {
		return nil, fmt.Errorf("%w: %s %q is not a decimal field element", ErrMalformed, what, s)
	}
	return v, nil
}

func canonicalDecimal(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// strict decodes b into v refusing keys v does not have: a key a checker
// ignores would be words a person reads that nothing binds.
func strict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// MarshalJSON writes the opening with decimal field elements.
func (o Opening) MarshalJSON() ([]byte, error) {
	j := openingJSON{Circuit: o.Circuit, CircuitID: dec(o.CircuitID), IssuerKeyHash: dec(o.IssuerKeyHash),
		RevocationNonce: o.RevocationNonce, Fields: make([]fieldJSON, len(o.Fields))}
	for i, f := range o.Fields {
		j.Fields[i] = fieldJSON{Name: f.Name, Value: dec(f.Value), Text: f.Text}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads an opening; every value must be a decimal field
// element, and a key the opening does not have is refused.
func (o *Opening) UnmarshalJSON(b []byte) error {
	var j openingJSON
	if err := strict(b, &j); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var out Opening
	var err error
	out.Circuit, out.RevocationNonce = j.Circuit, j.RevocationNonce
	if out.CircuitID, err = parseDec("opening.circuit_id", j.CircuitID, true); err != nil {
		return err
	}
	if out.IssuerKeyHash, err = parseDec("opening.issuer_key_hash", j.IssuerKeyHash, true); err != nil {
		return err
	}
	if len(j.Fields) == 0 || len(j.Fields) > MaxFields {
		return fmt.Errorf("%w: the opening has %d fields (1 to %d)", ErrMalformed, len(j.Fields), MaxFields)
	}
	out.Fields = make([]Field, len(j.Fields))
	for i, f := range j.Fields {
		v, err := parseDec(fmt.Sprintf("opening.fields[%d] (%s)", i, f.Name), f.Value, false)
		if err != nil {
			return err
		}
		out.Fields[i] = Field{Name: f.Name, Value: v, Text: f.Text}
	}
	*o = out
	return nil
}

// MarshalJSON writes {"digest": "<decimal>", "opening": {...}}.
func (s Statement) MarshalJSON() ([]byte, error) {
	return json.Marshal(statementJSON{Digest: dec(s.Digest), Opening: s.Opening, Batch: s.Batch})
}

// UnmarshalJSON reads a statement, refusing keys it does not have. It does
// not check the digest against the opening: Check does.
func (s *Statement) UnmarshalJSON(b []byte) error {
	var j statementJSON
	if err := strict(b, &j); err != nil {
		if errors.Is(err, ErrMalformed) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	d, err := parseDec("digest", j.Digest, false)
	if err != nil {
		return err
	}
	*s = Statement{Digest: d, Opening: j.Opening, Batch: j.Batch}
	return nil
}

// Parse reads a statement document and checks its digest against its
// opening.
func Parse(b []byte) (Statement, error) {
	var s Statement
	if err := json.Unmarshal(b, &s); err != nil {
		if errors.Is(err, ErrMalformed) {
			return Statement{}, err
		}
		return Statement{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return s, s.Check()
}

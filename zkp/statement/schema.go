package statement

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Render says how a field's text follows from its value. A statement's
// texts are what a person reads, and nothing but the value is bound by the
// proof, so a checker recomputes every text from its value and refuses a
// statement whose text differs (docs/statement.md, "What binds each part").
type Render string

// The renderings of docs/statement.md ("Encodings").
const (
	// RenderNone: the field has no text (subject_commitment, salt).
	RenderNone Render = "none"
	// RenderCode: field(s) read back — the value's big-endian bytes (1 to
	// 31) as UTF-8; "" for 0, an empty slot.
	RenderCode Render = "code"
	// RenderNumber: the value in decimal.
	RenderNumber Render = "number"
	// RenderDay: a day number (days since 1970-01-01, before 10000-01-01)
	// as YYYY-MM-DD.
	RenderDay Render = "day"
	// RenderFlag: 1 as "true", 0 as "false".
	RenderFlag Render = "flag"
	// RenderCents: whole cents as dollars with two decimals ("25.00").
	RenderCents Render = "cents"
	// RenderClinical: I + 8·C + 64·V as "interaction=<rank I>
	// contraindication=<rank C> valid=<V>", rank names from Schema.Ranks;
	// "" when the field's slot is empty (FieldSchema.Slot is 0).
	RenderClinical Render = "clinical"
	// RenderTriggers: Σ tₖ·TriggerBase^(k−1) as the names of the non-zero
	// tₖ in the public list (Schema.Triggers, 1-based), space-separated.
	RenderTriggers Render = "triggers"
	// RenderEntries: entries of the patient's record the service could not
	// identify (prescription-v3's unidentified field). The text is a JSON
	// array of "medication: …" / "allergy: …" strings, "" for none; the
	// value is EntriesValue(text). The text is the caller's own words,
	// which no field element holds, so it is the one text not rendered
	// from its value: checkers hash it instead (CheckEntries), which binds
	// it just as tightly.
	RenderEntries Render = "entries"
)

// EntriesValue is the value a RenderEntries text commits to: 0 for "",
// else the first 31 bytes of the text's SHA-256 read as a big-endian
// integer (below the BN254 field modulus).
func EntriesValue(text string) *big.Int {
	if text == "" {
		return new(big.Int)
	}
	h := sha256.Sum256([]byte(text))
	return new(big.Int).SetBytes(h[:31])
}

// entryKinds are the prefixes of a RenderEntries text's entries.
var entryKinds = []string{"medication: ", "allergy: "}

// CheckEntries reports whether text is a well-formed RenderEntries text
// committed to by v: "" for 0, else a non-empty JSON array of
// "medication: …" / "allergy: …" strings whose EntriesValue is v. The
// JavaScript checker words its refusals the same.
func CheckEntries(text string, v *big.Int) error {
	if v == nil || v.Sign() == 0 {
		if text != "" {
			return errors.New("value 0 lists no entries: the text must be empty")
		}
		return nil
	}
	var list []string
	ok := json.Unmarshal([]byte(text), &list) == nil && len(list) > 0 && strings.HasPrefix(strings.TrimSpace(text), "[")
	for _, e := range list {
		ok = ok && (strings.HasPrefix(e, entryKinds[0]) || strings.HasPrefix(e, entryKinds[1]))
	}
	if !ok {
		return errors.New(`text is not a JSON array of "medication: …" or "allergy: …" entries`)
	}
	if EntriesValue(text).Cmp(v) != 0 {
		return errors.New("text does not hash to the value (the first 31 bytes of its SHA-256)")
	}
	return nil
}

// lastDay is the day number of 9999-12-31: a text is YYYY-MM-DD with four
// digits, in every language's date library.
const lastDay = 2932896

// FieldSchema is one field of a circuit's statement: its name and how its
// text follows from its value.
type FieldSchema struct {
	Name string `json:"name"`
	Text Render `json:"text"`
	// Slot, for a per-drug field whose text depends on whether the slot
	// holds a drug, names the slot's field: when that value is 0 the text
	// is empty.
	Slot string `json:"slot,omitempty"`
}

// Schema is what a circuit's statement must look like: the circuit's name
// and id, its fields in the digest's order, and the public lists its
// texts are rendered from. Package zkp derives each circuit's schema from
// the circuit's own definition (zkp.Schemas).
type Schema struct {
	Circuit   string
	CircuitID *big.Int
	Fields    []FieldSchema
	// Ranks names the severity ranks 0..n−1 of RenderClinical.
	Ranks []string
	// Triggers is the public trigger list of RenderTriggers; TriggerBase
	// and TriggerSlots say how positions are packed into one value.
	Triggers     []string
	TriggerBase  int64
	TriggerSlots int
}

type schemaJSON struct {
	Circuit      string        `json:"circuit"`
	CircuitID    string        `json:"circuit_id"`
	Fields       []FieldSchema `json:"fields"`
	Ranks        []string      `json:"ranks,omitempty"`
	Triggers     []string      `json:"triggers,omitempty"`
	TriggerBase  int64         `json:"trigger_base,omitempty"`
	TriggerSlots int           `json:"trigger_slots,omitempty"`
}

// MarshalJSON writes the schema with its circuit id in decimal: the form
// examples/verify-js/schema.json carries.
func (s Schema) MarshalJSON() ([]byte, error) {
	return json.Marshal(schemaJSON{Circuit: s.Circuit, CircuitID: dec(s.CircuitID), Fields: s.Fields,
		Ranks: s.Ranks, Triggers: s.Triggers, TriggerBase: s.TriggerBase, TriggerSlots: s.TriggerSlots})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Schema) UnmarshalJSON(b []byte) error {
	var j schemaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	id, err := parseDec("circuit_id", j.CircuitID, false)
	if err != nil {
		return err
	}
	*s = Schema{Circuit: j.Circuit, CircuitID: id, Fields: j.Fields, Ranks: j.Ranks,
		Triggers: j.Triggers, TriggerBase: j.TriggerBase, TriggerSlots: j.TriggerSlots}
	return nil
}

// Names is the field names in order.
func (s Schema) Names() []string {
	n := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		n[i] = f.Name
	}
	return n
}

// Errors of a statement that does not follow its circuit's schema.
var (
	// ErrSchema is an opening whose field names or order are not the
	// circuit's.
	ErrSchema = errors.New("statement: the fields are not the circuit's")
	// ErrText is a text that is not the rendering of its value.
	ErrText = errors.New("statement: a text is not the rendering of its value")
)

// CheckNames reports whether the opening's field names are exactly the
// schema's, in order: ErrSchema naming the first difference if not.
func (s Schema) CheckNames(o Opening) error {
	for i, f := range s.Fields {
		switch {
		case i >= len(o.Fields):
			return fmt.Errorf("%w: the opening has %d fields, %s has %d (field %d is %s)", ErrSchema, len(o.Fields), s.Circuit, len(s.Fields), i, f.Name)
		case o.Fields[i].Name != f.Name:
			return fmt.Errorf("%w: field %d is named %q, %s's field %d is %q", ErrSchema, i, o.Fields[i].Name, s.Circuit, i, f.Name)
		}
	}
	if len(o.Fields) > len(s.Fields) {
		return fmt.Errorf("%w: the opening has %d fields, %s has %d (field %d %q is extra)", ErrSchema, len(o.Fields), s.Circuit, len(s.Fields), len(s.Fields), o.Fields[len(s.Fields)].Name)
	}
	return nil
}

// CheckTexts renders every field's text from the values, by position in
// the schema, and returns one ErrText per field whose text differs (or
// whose value cannot be rendered). The opening must have the schema's
// number of fields: ErrSchema if not. Names are CheckNames' business: a
// value's meaning is its position, which the digest binds.
func (s Schema) CheckTexts(o Opening) []error {
	if len(o.Fields) != len(s.Fields) {
		return []error{fmt.Errorf("%w: not checked: the opening has %d fields, %s has %d", ErrSchema, len(o.Fields), s.Circuit, len(s.Fields))}
	}
	values := o.Values()
	var errs []error
	for i, f := range o.Fields {
		if s.Fields[i].Text == RenderEntries {
			if err := CheckEntries(f.Text, values[i]); err != nil {
				errs = append(errs, fmt.Errorf("%w: field %d %s: %w", ErrText, i, s.Fields[i].Name, err))
			}
			continue
		}
		want, err := s.Text(values, i)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%w: field %d %s: %w", ErrText, i, s.Fields[i].Name, err))
		case f.Text != want:
			errs = append(errs, fmt.Errorf("%w: field %d %s: text %q is not %q, the rendering of its value %s", ErrText, i, s.Fields[i].Name, f.Text, want, f.Value))
		}
	}
	return errs
}

// Text is the canonical text of field i given the values of every field
// (in the schema's order): what the opening's text must be.
func (s Schema) Text(values []*big.Int, i int) (string, error) {
	if i < 0 || i >= len(s.Fields) || len(values) != len(s.Fields) {
		return "", fmt.Errorf("%w: %d values for %s's %d fields", ErrSchema, len(values), s.Circuit, len(s.Fields))
	}
	f, v := s.Fields[i], values[i]
	if v == nil || v.Sign() < 0 {
		return "", errors.New("no value")
	}
	if f.Slot != "" {
		j := -1
		for k, g := range s.Fields {
			if g.Name == f.Slot {
				j = k
			}
		}
		if j < 0 {
			return "", fmt.Errorf("the schema names no slot field %q", f.Slot)
		}
		if values[j] != nil && values[j].Sign() == 0 {
			if v.Sign() != 0 {
				return "", fmt.Errorf("value %s in an empty slot (%s is 0)", v, f.Slot)
			}
			return "", nil
		}
	}
	return s.render(f.Text, v)
}

func (s Schema) render(r Render, v *big.Int) (string, error) {
	switch r {
	case RenderNone:
		return "", nil
	case RenderCode:
		return CodeText(v)
	case RenderNumber:
		return v.String(), nil
	case RenderDay:
		if !v.IsInt64() || v.Int64() > lastDay {
			return "", fmt.Errorf("value %s is not a day number before 10000-01-01", v)
		}
		return DayText(v.Int64()), nil
	case RenderFlag:
		if v.Cmp(big.NewInt(1)) > 0 {
			return "", fmt.Errorf("value %s is not a flag (0 or 1)", v)
		}
		return strconv.FormatBool(v.Sign() == 1), nil
	case RenderCents:
		return CentsText(v), nil
	case RenderClinical:
		return s.clinicalText(v)
	case RenderTriggers:
		return s.triggersText(v)
	case RenderEntries:
		if v.Sign() == 0 {
			return "", nil
		}
		return "", errors.New("an entries text is the caller's words, not rendered from its value: CheckEntries checks it against the value")
	}
	return "", fmt.Errorf("unknown rendering %q", r)
}

// CodeText is field(s) read back: the UTF-8 text whose big-endian bytes the
// value is (1 to 31 bytes); "" for 0.
func CodeText(v *big.Int) (string, error) {
	if v.Sign() == 0 {
		return "", nil
	}
	b := v.Bytes()
	if len(b) > 31 || !utf8.Valid(b) {
		return "", fmt.Errorf("value %s is not the field of a 1-31 byte UTF-8 code", v)
	}
	return string(b), nil
}

// DayText is a day number (days since 1970-01-01) as YYYY-MM-DD.
func DayText(day int64) string {
	return time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
}

// CentsText is whole cents as dollars with two decimals.
func CentsText(c *big.Int) string {
	q, r := new(big.Int).QuoRem(c, big.NewInt(100), new(big.Int))
	return fmt.Sprintf("%s.%02d", q, r.Int64())
}

func (s Schema) clinicalText(v *big.Int) (string, error) {
	n := int64(len(s.Ranks))
	if !v.IsInt64() || v.Int64() >= 128 || v.Int64()%8 >= n || v.Int64()/8%8 >= n {
		return "", fmt.Errorf("value %s is not interaction + 8·contraindication + 64·valid with ranks 0-%d", v, n-1)
	}
	x := v.Int64()
	return fmt.Sprintf("interaction=%s contraindication=%s valid=%t", s.Ranks[x%8], s.Ranks[x/8%8], x/64 == 1), nil
}

func (s Schema) triggersText(v *big.Int) (string, error) {
	if s.TriggerBase < 2 {
		return "", errors.New("the schema has no trigger packing")
	}
	rest, base := new(big.Int).Set(v), big.NewInt(s.TriggerBase)
	var names []string
	for range s.TriggerSlots {
		t := new(big.Int)
		rest.QuoRem(rest, base, t)
		switch {
		case t.Sign() == 0:
		case t.Int64() > int64(len(s.Triggers)):
			return "", fmt.Errorf("value %s names trigger %d of a list of %d", v, t.Int64(), len(s.Triggers))
		default:
			names = append(names, s.Triggers[t.Int64()-1])
		}
	}
	if rest.Sign() != 0 {
		return "", fmt.Errorf("value %s packs more than %d triggers", v, s.TriggerSlots)
	}
	return strings.Join(names, " "), nil
}

// CheckSchema checks the statement against its circuit's schema, as the
// service checks what it hands out: the digest, the circuit's name and id,
// the field names, every text and the plain nonce. Checkers of a recorded statement
// (package verify) make the same checks one by one against what the
// chain recorded.
func (s Statement) CheckSchema(sc Schema) error {
	if err := s.Check(); err != nil {
		return err
	}
	o := s.Opening
	if o.Circuit != sc.Circuit || o.CircuitID == nil || o.CircuitID.Cmp(sc.CircuitID) != 0 {
		return fmt.Errorf("%w: the opening names circuit %q (id %s), not %s", ErrSchema, o.Circuit, dec(o.CircuitID), sc.Circuit)
	}
	if err := sc.CheckNames(o); err != nil {
		return err
	}
	if errs := sc.CheckTexts(o); len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := o.CheckNonce(); err != nil {
		return err
	}
	return nil
}

// ErrNonce is an opening whose plain revocation_nonce is not the committed
// revocation_nonce field.
var ErrNonce = errors.New("statement: opening.revocation_nonce is not the committed revocation_nonce field")

// CommittedNonce is the value of the opening's revocation_nonce field: the
// nonce the digest commits to.
func (o Opening) CommittedNonce() (uint64, error) {
	v := o.Get("revocation_nonce")
	if v == nil {
		return 0, fmt.Errorf("%w: the opening has no revocation_nonce field", ErrNonce)
	}
	if !v.IsUint64() {
		return 0, fmt.Errorf("%w: the revocation_nonce field %s is not a 64-bit nonce", ErrNonce, v)
	}
	return v.Uint64(), nil
}

// CheckNonce reports whether the opening's plain revocation_nonce is the
// committed one (a JSON tool that reads numbers as floats rounds a nonce
// above 2^53 and would point a revocation check at another nonce).
func (o Opening) CheckNonce() error {
	n, err := o.CommittedNonce()
	if err != nil {
		return err
	}
	if n != o.RevocationNonce {
		return fmt.Errorf("%w: opening.revocation_nonce %d, the committed field %d", ErrNonce, o.RevocationNonce, n)
	}
	return nil
}

package zkp

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseProof feeds the API decoder arbitrary proof_data and public
// inputs: it must never panic, what it accepts must re-encode to the same
// text, and Verify must either accept or fail with ErrInvalidProof.
func FuzzParseProof(f *testing.F) {
	p, err := NewProver(testSys, testTimeout)
	if err != nil {
		f.Fatal(err)
	}
	v, err := NewVerifier(testSys)
	if err != nil {
		f.Fatal(err)
	}
	proof, _, err := p.ProveEligibilityV3(f.Context(), eligibleInput())
	if err != nil {
		f.Fatal(err)
	}
	pi := proof.PublicInputs()
	f.Add(proof.ProofData(), pi[0], pi[1])
	f.Add(strings.Repeat("00", ProofSize), "0x00", "")
	f.Add("0x"+strings.Repeat("ff", ProofSize), pi[0], "0x"+strings.Repeat("ff", 32))
	f.Fuzz(func(t *testing.T, data, in0, in1 string) {
		inputs := append([]string(nil), pi...)
		inputs[0], inputs[1] = in0, in1
		parsed, err := ParseProof(CircuitEligibilityV3, data, inputs)
		if err != nil {
			if !errors.Is(err, ErrInvalidProof) {
				t.Fatalf("decoder error not wrapping ErrInvalidProof: %v", err)
			}
			return
		}
		if got, want := parsed.ProofData(), "0x"+strings.ToLower(strings.TrimPrefix(data, "0x")); got != want {
			t.Fatalf("re-encoded proof %s, decoded %s", got, want)
		}
		for i, s := range parsed.PublicInputs() {
			if want := "0x" + strings.ToLower(strings.TrimPrefix(inputs[i], "0x")); s != want {
				t.Fatalf("public input %d re-encoded %s, decoded %s", i, s, want)
			}
		}
		if err := v.Verify(t.Context(), parsed); err != nil && !errors.Is(err, ErrInvalidProof) {
			t.Fatalf("verify: %v", err)
		}
	})
}

// FuzzFoldCase checks that case-folded encodings agree with the relation the
// eligibility agent uses for exclusions: strings.EqualFold.
func FuzzFoldCase(f *testing.F) {
	for _, pair := range [][2]string{
		{"proc005", "PROC005"}, {"K", "\u212a"}, {"ß", "ẞ"}, {"ſ", "S"}, {"\xff", "\xfe"}, {"a", "b"}, {"", ""},
	} {
		f.Add(pair[0], pair[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := foldCase(a) == foldCase(b), strings.EqualFold(a, b); got != want {
			t.Fatalf("foldCase(%q) == foldCase(%q) is %v, EqualFold %v", a, b, got, want)
		}
	})
}

package ceremony

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
)

// sectionTau names the single section of phase1 and srs files.
const sectionTau = "powers-of-tau"

// MinBeacon is the shortest beacon accepted, in bytes.
const MinBeacon = 16

// Circuit is one circuit of a ceremony: its name and compiled BN254 R1CS.
// Circuits with Pedersen (BSB22) commitments are refused.
type Circuit struct {
	Name string
	CCS  *csbn254.R1CS
}

// digest is the SHA-256 of the serialized constraint system (the same
// digest zkp records in its key manifests).
func (c Circuit) digest() (string, error) {
	h := sha256.New()
	if _, err := c.CCS.WriteTo(h); err != nil {
		return "", fmt.Errorf("ceremony: hash %s constraint system: %w", c.Name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Power returns the k of the smallest 2^k domain that holds the circuit.
func (c Circuit) Power() int { return powerOf(c.CCS.GetNbConstraints()) }

func powerOf(constraints int) int {
	n := ecc.NextPowerOfTwo(uint64(max(constraints, 2)))
	return bits.TrailingZeros64(n)
}

// PowerFor returns the phase-1 power that the largest of circuits needs.
func PowerFor(circuits []Circuit) int {
	p := 1
	for _, c := range circuits {
		p = max(p, c.Power())
	}
	return p
}

// Step is the outcome of checking one transcript file.
type Step struct {
	Kind  string
	Index int
	Hash  string // SHA-256 of the file
	Err   error  // nil: the file checks out
}

func (s Step) String() string {
	what := "contribution verified"
	switch {
	case s.Err != nil:
		what = "FAILED: " + s.Err.Error()
	case s.Kind == KindSRS:
		what = "sealed with the beacon; reproduced"
	case s.Index == 0:
		what = "initial state (no randomness); reproduced"
	}
	return fmt.Sprintf("%s #%d %s %s", s.Kind, s.Index, s.Hash, what)
}

// stepErr is the error of a failed step, wrapping ErrTranscript once.
func stepErr(s Step) error {
	if errors.Is(s.Err, ErrTranscript) {
		return fmt.Errorf("%s #%d: %w", s.Kind, s.Index, s.Err)
	}
	return fmt.Errorf("%w: %s #%d: %w", ErrTranscript, s.Kind, s.Index, s.Err)
}

// guard turns a panic of gnark's (it panics on some malformed inputs)
// into an error.
func guard(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %s: %v", ErrTranscript, what, r)
	}
}

// NewPhase1 returns the file a ceremony starts from: the powers of tau of a
// 2^power domain with every secret equal to one. It holds no randomness.
func NewPhase1(power int) (f *File, err error) {
	if power < 1 || power > MaxPower {
		return nil, fmt.Errorf("ceremony: power must be 1-%d, got %d", MaxPower, power)
	}
	defer guard(&err, "phase-1 init")
	b, err := encode(mpcsetup.NewPhase1(1 << power))
	if err != nil {
		return nil, err
	}
	return newFile(Header{Kind: KindPhase1, Power: power, Sections: []Section{{Name: sectionTau}}}, [][]byte{b})
}

// Contribute adds fresh randomness (crypto/rand) to a phase1 or phase2
// file and returns the next file. The randomness is discarded when
// Contribute returns. It checks in's encoding, not the chain behind it:
// that is Verify's job.
func Contribute(ctx context.Context, in *File) (out *File, err error) {
	defer guard(&err, "contribute")
	h := Header{Kind: in.Kind, Index: in.Index + 1, Power: in.Power, Prev: in.Hash(), SRS: in.SRS,
		Sections: append([]Section(nil), in.Sections...)}
	var payloads [][]byte
	switch in.Kind {
	case KindPhase1:
		p, err := decodePhase1(in.sections[0], in.Power)
		if err != nil {
			return nil, err
		}
		p.Contribute()
		b, err := encode(p)
		if err != nil {
			return nil, err
		}
		payloads = append(payloads, b)
	case KindPhase2:
		for i, s := range in.Sections {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			p, err := decodePhase2(in.sections[i], shapeOf(s))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			p.Contribute()
			b, err := encode(p)
			if err != nil {
				return nil, err
			}
			payloads = append(payloads, b)
		}
	default:
		return nil, fmt.Errorf("ceremony: a %s file takes no contribution (only phase1 and phase2 files do)", in.Kind)
	}
	return newFile(h, payloads)
}

func shapeOf(s Section) phase2Shape {
	return phase2Shape{pkk: s.PKK, z: (1 << min(max(s.Power, 0), MaxPower)) - 1}
}

// checkChain checks the framing shared by phase-1 and phase-2 chains: one kind,
// consecutive indexes from 0 or 1, each file naming the one before it.
func checkChain(files []*File, kind string) error {
	if len(files) == 0 {
		return fmt.Errorf("ceremony: no %s files", kind)
	}
	if files[0].Index > 1 {
		return fmt.Errorf("%w: the %s chain starts at #%d; it must start with the init file (#0) or the first contribution (#1)", ErrTranscript, kind, files[0].Index)
	}
	for i, f := range files {
		if f.Kind != kind {
			return fmt.Errorf("%w: file #%d is a %s file among %s files", ErrTranscript, i, f.Kind, kind)
		}
		if i == 0 {
			continue
		}
		prev := files[i-1]
		if f.Index != prev.Index+1 {
			return fmt.Errorf("%w: %s #%d follows #%d (a contribution is missing or repeated)", ErrTranscript, kind, f.Index, prev.Index)
		}
		if f.Prev != prev.Hash() {
			return fmt.Errorf("%w: %s #%d was contributed from another file than #%d (%s)", ErrTranscript, kind, f.Index, prev.Index, prev.Hash())
		}
	}
	return nil
}

// VerifyPhase1 checks a phase-1 chain from the initial state: the init
// file, when given, must be the initial state, and every contribution must
// carry a valid proof of update from the one before it. It returns one Step
// per file up to the first failure, and the last contribution.
func VerifyPhase1(ctx context.Context, files []*File) (steps []Step, last *mpcsetup.Phase1, err error) {
	if err := checkChain(files, KindPhase1); err != nil {
		return nil, nil, err
	}
	defer guard(&err, "phase-1 verification")
	power := files[0].Power
	// The initial state is as large as the header says: check the bytes
	// present can hold it before computing it.
	if err := precheckPhase1(files[0].sections[0], power); err != nil {
		return nil, nil, fmt.Errorf("phase1 #%d: %w", files[0].Index, err)
	}
	prev := mpcsetup.NewPhase1(1 << power)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return steps, nil, err
		}
		step := Step{Kind: KindPhase1, Index: f.Index, Hash: f.Hash()}
		var next *mpcsetup.Phase1
		next, step.Err = verifyPhase1File(prev, f, power)
		steps = append(steps, step)
		if step.Err != nil {
			return steps, nil, stepErr(step)
		}
		prev = next
	}
	if files[len(files)-1].Index == 0 {
		return steps, nil, fmt.Errorf("%w: phase 1 has %w", ErrTranscript, ErrNoContribution)
	}
	return steps, prev, nil
}

// verifyPhase1File checks f against prev and returns the state f holds.
func verifyPhase1File(prev *mpcsetup.Phase1, f *File, power int) (*mpcsetup.Phase1, error) {
	if f.Power != power {
		return nil, fmt.Errorf("domain 2^%d, the chain's is 2^%d", f.Power, power)
	}
	if f.Index == 0 {
		if err := precheckPhase1(f.sections[0], power); err != nil {
			return nil, err
		}
		init, err := NewPhase1(power)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(init.sections[0], f.sections[0]) {
			return nil, errors.New("the init file is not the initial state")
		}
		return prev, nil
	}
	next, err := decodePhase1(f.sections[0], power)
	if err != nil {
		return nil, err
	}
	if err := prev.Verify(next); err != nil {
		return nil, err
	}
	return next, nil
}

// SealPhase1 verifies a phase-1 chain and seals its last contribution with
// beacon (gnark's Seal: a final contribution derived from the beacon and
// the transcript, which anyone can recompute). The srs file it returns is
// what phase 2 starts from; it records the beacon and every file sealed.
func SealPhase1(ctx context.Context, files []*File, beacon []byte) (srs *File, steps []Step, err error) {
	if len(beacon) < MinBeacon {
		return nil, nil, fmt.Errorf("ceremony: the beacon must be at least %d bytes", MinBeacon)
	}
	if len(files) == 0 || files[0].Index != 0 {
		return nil, nil, fmt.Errorf("ceremony: sealing phase 1 needs its whole chain, from the init file (#0)")
	}
	steps, last, err := VerifyPhase1(ctx, files)
	if err != nil {
		return nil, steps, err
	}
	defer guard(&err, "phase-1 seal")
	commons := last.Seal(beacon)
	b, err := encode(&commons)
	if err != nil {
		return nil, steps, err
	}
	end := files[len(files)-1]
	h := Header{Kind: KindSRS, Index: end.Index, Power: end.Power, Prev: end.Hash(), Beacon: hex.EncodeToString(beacon),
		Sections: []Section{{Name: sectionTau}}}
	for _, f := range files {
		h.Sealed = append(h.Sealed, f.Hash())
	}
	srs, err = newFile(h, [][]byte{b})
	return srs, steps, err
}

// VerifySRS checks that srs is the seal of the phase-1 chain files with the
// beacon srs records. Whoever checks must also check that this beacon is
// the one announced before the ceremony (srs.Beacon).
func VerifySRS(ctx context.Context, files []*File, srs *File) ([]Step, error) {
	if srs.Kind != KindSRS {
		return nil, fmt.Errorf("%w: %s is a %s file, not srs", ErrTranscript, srs.Hash(), srs.Kind)
	}
	beacon, err := hex.DecodeString(srs.Beacon)
	if err != nil {
		return nil, fmt.Errorf("%w: srs beacon is not hex", ErrTranscript)
	}
	again, steps, err := SealPhase1(ctx, files, beacon)
	if err != nil {
		return steps, err
	}
	step := Step{Kind: KindSRS, Index: srs.Index, Hash: srs.Hash()}
	if !bytes.Equal(again.raw, srs.raw) {
		step.Err = errors.New("sealing the phase-1 chain with its beacon gives another file")
	}
	steps = append(steps, step)
	if step.Err != nil {
		return steps, stepErr(step)
	}
	return steps, nil
}

// commonsFor truncates the sealed powers of tau to a circuit's 2^power
// domain: a prefix of a powers-of-tau sequence is the sequence of the
// smaller domain, so every circuit gets keys over its own domain.
func commonsFor(c *mpcsetup.SrsCommons, power int) (*mpcsetup.SrsCommons, error) {
	n := 1 << power
	if len(c.G1.AlphaTau) < n {
		return nil, fmt.Errorf("ceremony: phase 1 covers 2^%d constraints, the circuit needs 2^%d: run phase 1 with --power %d",
			bits.TrailingZeros(uint(len(c.G1.AlphaTau))), power, power)
	}
	var t mpcsetup.SrsCommons
	t.G1.Tau = c.G1.Tau[:2*n-1]
	t.G1.AlphaTau = c.G1.AlphaTau[:n]
	t.G1.BetaTau = c.G1.BetaTau[:n]
	t.G2.Tau = c.G2.Tau[:n]
	t.G2.Beta = c.G2.Beta
	return &t, nil
}

// initPhase2 computes a circuit's phase-2 initial state over the sealed
// phase 1: deterministic, so a verifier recomputes it.
func initPhase2(c Circuit, commons *mpcsetup.SrsCommons) (p *mpcsetup.Phase2, evals *mpcsetup.Phase2Evaluations, tc *mpcsetup.SrsCommons, err error) {
	defer guard(&err, "phase-2 init of "+c.Name)
	if c.CCS == nil {
		return nil, nil, nil, fmt.Errorf("ceremony: circuit %q has no constraint system", c.Name)
	}
	if tc, err = commonsFor(commons, c.Power()); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	p = new(mpcsetup.Phase2)
	e := p.Initialize(c.CCS, tc)
	if len(e.G1.CKK) != 0 {
		return nil, nil, nil, fmt.Errorf("ceremony: circuit %s has Pedersen commitments, which the Solidity verifier does not support", c.Name)
	}
	return p, &e, tc, nil
}

// srsCommons decodes an srs file.
func srsCommons(srs *File) (*mpcsetup.SrsCommons, error) {
	if srs.Kind != KindSRS {
		return nil, fmt.Errorf("%w: phase 2 starts from an srs file, not a %s file", ErrTranscript, srs.Kind)
	}
	return decodeSRS(srs.sections[0], srs.Power)
}

// NewPhase2 returns the phase-2 init file for circuits, over the sealed
// phase 1 srs. It holds no randomness: anyone recomputes it.
func NewPhase2(ctx context.Context, srs *File, circuits []Circuit) (*File, error) {
	commons, err := srsCommons(srs)
	if err != nil {
		return nil, err
	}
	if len(circuits) == 0 {
		return nil, errors.New("ceremony: no circuits")
	}
	h := Header{Kind: KindPhase2, SRS: srs.Hash()}
	var payloads [][]byte
	seen := map[string]bool{}
	for _, c := range circuits {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.Name == "" || seen[c.Name] {
			return nil, fmt.Errorf("ceremony: circuit names must be distinct and non-empty (%q)", c.Name)
		}
		seen[c.Name] = true
		p, _, _, err := initPhase2(c, commons)
		if err != nil {
			return nil, err
		}
		d, err := c.digest()
		if err != nil {
			return nil, err
		}
		b, err := encode(p)
		if err != nil {
			return nil, err
		}
		h.Sections = append(h.Sections, Section{Name: c.Name, CCSSHA256: d, Power: c.Power(), PKK: len(p.Parameters.G1.PKK)})
		payloads = append(payloads, b)
	}
	return newFile(h, payloads)
}

// phase2State is one circuit's verified phase 2.
type phase2State struct {
	circuit Circuit
	last    *mpcsetup.Phase2
	evals   *mpcsetup.Phase2Evaluations
	commons *mpcsetup.SrsCommons
}

// VerifyPhase2 checks a phase-2 chain over the sealed phase 1 srs for
// circuits: every file must start from srs and hold one section per
// circuit, in order, over the same constraint system; the init file, when
// given, must be the recomputed initial state; every contribution must
// carry a valid proof of update for every circuit.
func VerifyPhase2(ctx context.Context, srs *File, circuits []Circuit, files []*File) ([]Step, error) {
	steps, _, err := verifyPhase2(ctx, srs, circuits, files)
	return steps, err
}

func verifyPhase2(ctx context.Context, srs *File, circuits []Circuit, files []*File) (steps []Step, states []phase2State, err error) {
	if err := checkChain(files, KindPhase2); err != nil {
		return nil, nil, err
	}
	commons, err := srsCommons(srs)
	if err != nil {
		return nil, nil, err
	}
	defer guard(&err, "phase-2 verification")
	var want []Section
	for _, c := range circuits {
		p, evals, tc, err := initPhase2(c, commons)
		if err != nil {
			return nil, nil, err
		}
		d, err := c.digest()
		if err != nil {
			return nil, nil, err
		}
		want = append(want, Section{Name: c.Name, CCSSHA256: d, Power: c.Power(), PKK: len(p.Parameters.G1.PKK)})
		states = append(states, phase2State{circuit: c, last: p, evals: evals, commons: tc})
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return steps, nil, err
		}
		step := Step{Kind: KindPhase2, Index: f.Index, Hash: f.Hash()}
		step.Err = verifyPhase2File(f, srs.Hash(), want, states)
		steps = append(steps, step)
		if step.Err != nil {
			return steps, nil, stepErr(step)
		}
	}
	if files[len(files)-1].Index == 0 {
		return steps, nil, fmt.Errorf("%w: phase 2 has %w", ErrTranscript, ErrNoContribution)
	}
	return steps, states, nil
}

// verifyPhase2File checks f against the states before it and, when it
// checks out, advances them to f.
func verifyPhase2File(f *File, srsHash string, want []Section, states []phase2State) error {
	if f.SRS != srsHash {
		return fmt.Errorf("starts from another sealed phase 1 (srs %s, want %s)", f.SRS, srsHash)
	}
	if len(f.Sections) != len(want) {
		return fmt.Errorf("%d circuits, want %d", len(f.Sections), len(want))
	}
	next := make([]*mpcsetup.Phase2, len(want))
	for i, w := range want {
		s := f.Sections[i]
		if s.Name != w.Name || s.CCSSHA256 != w.CCSSHA256 || s.Power != w.Power || s.PKK != w.PKK {
			return fmt.Errorf("section %d is circuit %q (constraint system %s), want %q (%s): the transcript is for other circuits", i, s.Name, s.CCSSHA256, w.Name, w.CCSSHA256)
		}
		p, err := decodePhase2(f.sections[i], shapeOf(s))
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if f.Index == 0 {
			init, err := encode(states[i].last)
			if err != nil {
				return err
			}
			if !bytes.Equal(init, f.sections[i]) {
				return fmt.Errorf("%s: the init file is not the initial state", s.Name)
			}
		} else if err := states[i].last.Verify(p); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		next[i] = p
	}
	for i := range states {
		states[i].last = next[i]
	}
	return nil
}

// Keys is one circuit's key pair as a ceremony produced it.
type Keys struct {
	Name string
	PK   *groth16bn254.ProvingKey
	VK   *groth16bn254.VerifyingKey
}

// Finalize verifies the phase-2 chain (see VerifyPhase2) and seals its last
// contribution with beacon, returning every circuit's key pair.
func Finalize(ctx context.Context, srs *File, circuits []Circuit, files []*File, beacon []byte) (keys []Keys, steps []Step, err error) {
	if len(beacon) < MinBeacon {
		return nil, nil, fmt.Errorf("ceremony: the beacon must be at least %d bytes", MinBeacon)
	}
	steps, states, err := verifyPhase2(ctx, srs, circuits, files)
	if err != nil {
		return nil, steps, err
	}
	defer guard(&err, "phase-2 seal")
	for _, st := range states {
		pk, vk := st.last.Seal(st.commons, st.evals, beacon)
		k := Keys{Name: st.circuit.Name}
		var ok1, ok2 bool
		k.PK, ok1 = pk.(*groth16bn254.ProvingKey)
		k.VK, ok2 = vk.(*groth16bn254.VerifyingKey)
		if !ok1 || !ok2 {
			return nil, steps, fmt.Errorf("ceremony: unexpected key types %T, %T", pk, vk)
		}
		keys = append(keys, k)
	}
	return keys, steps, nil
}

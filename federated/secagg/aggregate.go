package secagg

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"fmt"
	"slices"
)

// Transcript is everything the coordinator holds when it unmasks a session.
// It contains public keys, commitments, masked vectors and revealed shares —
// never a participant's plaintext input.
type Transcript struct {
	Params      Params                 // session parameters
	Threshold   int                    // t of the t-of-n sharing
	Roster      []PublicKeys           // U1: who advertised keys
	Commitments map[string][]byte      // commitment to b_u, per member of U2
	Inputs      map[string]MaskedInput // U3: masked inputs received
	Reveals     []RevealedShare        // from the survivors (U4)
}

// Unmask returns the sum over U3 of the participants' inputs, in the
// session's group (modulo 2^64 by default).
// U2 is the set of keys of Commitments; U3 the keys of Inputs. It needs at
// least Threshold revealed shares for every member of U2, reconstructs each
// survivor's self-mask seed (checked against its commitment) and each dropped
// participant's mask key (checked against its advertised public key), and
// removes the masks.
func Unmask(ctx context.Context, tr Transcript) ([]uint64, error) {
	p := tr.Params
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := tr.Threshold
	if t < MinThreshold(len(tr.Roster)) {
		return nil, fmt.Errorf("%w: threshold %d for %d participants", ErrParams, t, len(tr.Roster))
	}
	byID, order, err := checkRoster(tr.Roster, t)
	if err != nil {
		return nil, err
	}
	u2 := make([]string, 0, len(tr.Commitments))
	for id := range tr.Commitments {
		if _, ok := byID[id]; !ok {
			return nil, fmt.Errorf("%w: %q shared keys without advertising", ErrUnmask, id)
		}
		u2 = append(u2, id)
	}
	slices.Sort(u2)
	u3 := make([]string, 0, len(tr.Inputs))
	for id, in := range tr.Inputs {
		if _, ok := tr.Commitments[id]; !ok {
			return nil, fmt.Errorf("%w: %q sent an input without sharing keys", ErrUnmask, id)
		}
		if err := p.CheckVector(in); err != nil {
			return nil, fmt.Errorf("%w: input of %q: %w", ErrUnmask, id, err)
		}
		u3 = append(u3, id)
	}
	slices.Sort(u3)
	if len(u3) < t {
		return nil, fmt.Errorf("%w: %d inputs, threshold %d", ErrUnmask, len(u3), t)
	}

	// Group revealed shares by (kind, of), one per revealer.
	type key struct {
		kind ShareKind
		of   string
	}
	groups := make(map[key][]Share)
	seen := make(map[[3]string]bool)
	for _, r := range tr.Reveals {
		if _, ok := slices.BinarySearch(u3, r.From); !ok {
			return nil, fmt.Errorf("%w: share revealed by %q, not a survivor", ErrUnmask, r.From)
		}
		_, alive := slices.BinarySearch(u3, r.Of)
		_, shared := slices.BinarySearch(u2, r.Of)
		switch {
		case !shared:
			return nil, fmt.Errorf("%w: share of %q, who never shared keys", ErrUnmask, r.Of)
		case r.Kind == SelfMask && !alive, r.Kind == MaskKey && alive:
			return nil, fmt.Errorf("%w: %s share of %q refused (would expose an input)", ErrUnmask, r.Kind, r.Of)
		case r.Kind != SelfMask && r.Kind != MaskKey:
			return nil, fmt.Errorf("%w: unknown share kind", ErrUnmask)
		}
		if x, _ := xOf(order, r.From); r.Share.X != x {
			return nil, fmt.Errorf("%w: %q revealed a share that is not its own", ErrUnmask, r.From)
		}
		id := [3]string{string(r.Kind), r.Of, r.From}
		if seen[id] {
			return nil, fmt.Errorf("%w: %q revealed twice for %q", ErrUnmask, r.From, r.Of)
		}
		seen[id] = true
		groups[key{r.Kind, r.Of}] = append(groups[key{r.Kind, r.Of}], r.Share)
	}

	// Sort each group by x so that groups revealed by the same survivors
	// share their Lagrange coefficients.
	for k := range groups {
		slices.SortFunc(groups[k], func(a, b Share) int { return int(a.X) - int(b.X) })
	}
	var comb combiner
	g := p.group()
	sum := make([]uint64, p.Words())
	for _, id := range u3 {
		g.Add(sum, tr.Inputs[id])
	}
	for _, v := range u3 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		seed, err := comb.combine(groups[key{SelfMask, v}], t, SeedSize)
		if err != nil {
			return nil, fmt.Errorf("%w: self mask of %q: %w", ErrUnmask, v, err)
		}
		if !bytes.Equal(g.Commit(p.Session, (*[SeedSize]byte)(seed)), tr.Commitments[v]) {
			return nil, fmt.Errorf("%w: self mask of %q does not match its commitment", ErrUnmask, v)
		}
		if err := g.Expand((*[SeedSize]byte)(seed), sum, -1); err != nil {
			return nil, err
		}
	}
	for _, v := range u2 {
		if _, alive := slices.BinarySearch(u3, v); alive {
			continue
		}
		raw, err := comb.combine(groups[key{MaskKey, v}], t, keySize)
		if err != nil {
			return nil, fmt.Errorf("%w: mask key of %q: %w", ErrUnmask, v, err)
		}
		priv, err := ecdh.X25519().NewPrivateKey(raw)
		if err != nil || !bytes.Equal(priv.PublicKey().Bytes(), byID[v].Mask) {
			return nil, fmt.Errorf("%w: mask key of %q does not match its public key", ErrUnmask, v)
		}
		for _, u := range u3 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seed, err := pairwiseSeed(p.Session, priv, v, u, byID[u].Mask)
			if err != nil {
				return nil, err
			}
			// u added maskSign(u, v) * PRG(seed); take it back out.
			if err := g.Expand(seed, sum, -maskSign(u, v)); err != nil {
				return nil, err
			}
		}
	}
	return sum, nil
}

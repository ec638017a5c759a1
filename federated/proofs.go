package federated

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/healthagents/healthagents/federated/secagg"
)

// ErrUpdateProof is wrapped when a masked input's proof is missing or does
// not verify: the input is refused before it joins the sum.
var ErrUpdateProof = errors.New("federated: masked input is not proved within its bounds")

// UpdateStatement is what a proof about one masked input states publicly:
// Masked (Dim elements in the round's group) hides Weights words of a
// quantized update whose L2 norm is within ClipNorm (FracBits fractional
// bits) followed by evaluation words whose held-out total is within
// EvalBound, masked with the seeds behind SelfCommitment and
// PairCommitments (one per other key-sharing participant, sorted by id,
// entering with the sign PairPlus).
type UpdateStatement struct {
	Weights         int
	Extra           int
	Masked          []uint64
	SelfCommitment  []byte
	PairCommitments [][]byte
	PairPlus        []bool
	ClipNorm        float64
	FracBits        uint
	EvalBound       int
}

// UpdateSecret is what only the participant knows: the quantized words (two's
// complement) and the seeds of its masks, in the statement's order.
type UpdateSecret struct {
	X         []uint64
	SelfSeed  [secagg.SeedSize]byte
	PairSeeds [][secagg.SeedSize]byte
}

// UpdateProver proves statements about a participant's own masked input
// (package federated/normproof implements it).
type UpdateProver interface {
	ProveUpdate(ctx context.Context, st *UpdateStatement, sec *UpdateSecret) ([]byte, error)
}

// UpdateVerifier checks such proofs (package federated/normproof implements it).
type UpdateVerifier interface {
	VerifyUpdate(ctx context.Context, st *UpdateStatement, proof []byte) error
}

// ProofConfig turns on proved rounds at the coordinator: masks live in Group,
// whose masking Verifier can check, and every masked input must come with a
// proof that it hides a bounded update.
type ProofConfig struct {
	Group    secagg.Group
	Verifier UpdateVerifier
}

// ParticipantProofs is the participant's side of ProofConfig.
type ParticipantProofs struct {
	Group  secagg.Group
	Prover UpdateProver
}

// maxProofSize bounds a submitted proof (a BN254 Groth16 proof is 256 bytes
// compressed, about 1 KiB in any encoding).
const maxProofSize = 4096

// statement builds the statement of org's masked input from what the
// coordinator holds. A pair whose two ends committed to different seeds is
// refused: one of them would mask with a seed that does not cancel.
func (c *Coordinator) statement(ctx context.Context, r *RoundState, org string, masked []uint64) (*UpdateStatement, error) {
	d := c.data
	st := &UpdateStatement{
		Weights: r.Dim - evalWords, Extra: evalWords, Masked: masked,
		SelfCommitment: d.commitments[org], ClipNorm: r.ClipNorm, FracBits: r.FracBits,
	}
	for _, v := range r.U2 {
		if v == org {
			continue
		}
		mine, theirs := d.seedCommits[org][v], d.seedCommits[v][org]
		if len(mine) == 0 || !slices.Equal(mine, theirs) {
			return nil, fmt.Errorf("%w: %w: seed commitment shared with %q disagrees", ErrInvalidSubmission, ErrUpdateProof, v)
		}
		st.PairCommitments = append(st.PairCommitments, mine)
		st.PairPlus = append(st.PairPlus, org < v)
	}
	b, err := c.evalBound(ctx, r, org)
	if err != nil {
		return nil, err
	}
	st.EvalBound = b
	return st, nil
}

// verifyMasked checks a masked input's encoding and, in a proved round, its
// proof.
func (c *Coordinator) verifyMasked(ctx context.Context, r *RoundState, org string, s *Submission) error {
	// A malformed masked input can only come from its sender (its API key
	// is the organization's): refused for the round like a failed proof.
	g := c.group(r)
	if len(s.Masked) != r.Dim*g.Words() {
		return refusal{fmt.Errorf("%w: masked vector of %d words, round expects %d", ErrInvalidSubmission, len(s.Masked), r.Dim*g.Words())}
	}
	if err := g.Check(s.Masked); err != nil {
		return refusal{fmt.Errorf("%w: masked vector is not a valid encoding: %w", ErrInvalidSubmission, err)}
	}
	if !r.Proved {
		if s.Proof != nil {
			return refusal{fmt.Errorf("%w: this round takes no proofs", ErrInvalidSubmission)}
		}
		return nil
	}
	if len(s.Proof) == 0 || len(s.Proof) > maxProofSize {
		return refusal{fmt.Errorf("%w: %w: a proof of at most %d bytes is required", ErrInvalidSubmission, ErrUpdateProof, maxProofSize)}
	}
	st, err := c.statement(ctx, r, org, s.Masked)
	if err != nil {
		return err
	}
	if err := c.cfg.Proofs.Verifier.VerifyUpdate(ctx, st, s.Proof); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return refusal{fmt.Errorf("%w: %w: %w", ErrInvalidSubmission, ErrUpdateProof, err)}
	}
	return nil
}

// refusal marks an error that refuses the sender's masked input for the
// rest of the round: it is malformed, or its proof is missing or does not
// verify, which only the sender can cause. (A pair's disagreeing seed commitments are not
// one: either end may have lied, so the sender may still be honest.)
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// checkSeedCommits validates a share message's pairwise seed commitments.
func checkSeedCommits(r *RoundState, org string, sc map[string][]byte) error {
	if !r.Proved {
		if sc != nil {
			return fmt.Errorf("%w: this round takes no seed commitments", ErrInvalidSubmission)
		}
		return nil
	}
	if len(sc) != len(r.Roster)-1 {
		return fmt.Errorf("%w: one seed commitment per other participant is required", ErrInvalidSubmission)
	}
	for _, k := range r.Roster {
		if k.ID == org {
			continue
		}
		if len(sc[k.ID]) != 32 {
			return fmt.Errorf("%w: seed commitment for %q must be 32 bytes", ErrInvalidSubmission, k.ID)
		}
	}
	return nil
}

// group is the round's arithmetic.
func (c *Coordinator) group(r *RoundState) secagg.Group {
	if r.Proved {
		return c.cfg.Proofs.Group
	}
	return secagg.Ring64{}
}

package federated

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/healthagents/healthagents/federated/secagg"
)

// Submit validates and records one protocol message of org for the current
// round, then lets the round move on if the message completed a phase.
func (c *Coordinator) Submit(ctx context.Context, org string, s Submission) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	if err := c.advance(ctx, now); err != nil {
		return err
	}
	s = cloneSubmission(s)
	s.Org = org
	if err := c.validate(ctx, org, &s); err != nil {
		var ref refusal
		if errors.As(err, &ref) {
			if xerr := c.refuse(ctx, org, now); xerr != nil {
				return errors.Join(err, xerr)
			}
		}
		return err
	}
	if err := c.store.SaveFederated(ctx, Change{Submission: &s}); err != nil {
		return fmt.Errorf("federated: saving submission: %w", err)
	}
	c.apply(&s)
	c.notify()
	return c.advance(ctx, now)
}

// RefuseInput refuses org for the rest of the current round when the
// round is in phase and awaits org's message of it: its share message
// (share_keys), its masked input (masked_input) or its revealed shares
// (unmasking). The HTTP layer calls it when org sent that phase's route a
// body that cannot be one (over the route's limit, not the encoding): the
// phase then closes once the others are in, as after a failed proof,
// instead of at its deadline. In any other case it does nothing.
func (c *Coordinator) RefuseInput(ctx context.Context, org string, phase Phase) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	if err := c.advance(ctx, now); err != nil {
		return err
	}
	r, d := c.round, c.data
	if r == nil || r.Phase != phase || slices.Contains(r.Refused, org) {
		return nil
	}
	awaited := false
	switch r.Phase {
	case PhaseShareKeys:
		_, sent := d.commitments[org]
		awaited = !sent && slices.ContainsFunc(r.Roster, func(k secagg.PublicKeys) bool { return k.ID == org })
	case PhaseMaskedInput:
		_, sent := d.inputs[org]
		awaited = !sent && slices.Contains(r.U2, org)
	case PhaseUnmasking:
		_, sent := d.reveals[org]
		awaited = !sent && slices.Contains(r.U3, org)
	}
	if !awaited {
		return nil
	}
	return c.refuse(ctx, org, now)
}

// refuse records that org was refused in the current round, so that the
// phase closes once the others have sent theirs instead of waiting for org
// until the phase deadline.
func (c *Coordinator) refuse(ctx context.Context, org string, now time.Time) error {
	next := c.round.clone()
	next.Refused = append(next.Refused, org)
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{next}}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", next.Number, err)
	}
	c.round = next
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "federated masked input refused", slog.Int("round", next.Number), slog.String("organization", org))
	c.notify()
	return c.advance(ctx, now)
}

func (c *Coordinator) openRound() (*RoundState, error) {
	if c.round == nil || !c.round.Phase.Open() {
		if c.stopped != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoOpenRound, c.stopped)
		}
		return nil, ErrNoOpenRound
	}
	return c.round, nil
}

// validate checks a submission against the round without changing anything.
func (c *Coordinator) validate(ctx context.Context, org string, s *Submission) error {
	r, err := c.openRound()
	if err != nil {
		return err
	}
	if s.Round != r.Number {
		return &RoundError{Got: s.Round, Current: r.Number}
	}
	if s.ModelVersion != "" && s.ModelVersion != r.BaseVersion {
		return fmt.Errorf("%w: round %d trains from %s, not %s", ErrStaleModel, r.Number, r.BaseVersion, s.ModelVersion)
	}
	set := 0
	for _, b := range []bool{s.Keys != nil, s.Shares != nil, s.Masked != nil, s.Reveals != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("%w: exactly one message per submission", ErrInvalidSubmission)
	}
	d := c.data
	switch {
	case s.Keys != nil:
		if r.Phase != PhaseAdvertiseKeys {
			return fmt.Errorf("%w: keys in phase %s", ErrWrongPhase, r.Phase)
		}
		if s.Keys.ID != org {
			return fmt.Errorf("%w: keys advertised for another organization", ErrInvalidSubmission)
		}
		if err := s.Keys.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSubmission, err)
		}
		for _, k := range d.keys {
			if k.ID == org {
				return ErrDuplicate
			}
			if bytes.Equal(k.Cipher, s.Keys.Cipher) || bytes.Equal(k.Mask, s.Keys.Mask) ||
				bytes.Equal(k.Cipher, s.Keys.Mask) || bytes.Equal(k.Mask, s.Keys.Cipher) {
				return fmt.Errorf("%w: public key already advertised", ErrInvalidSubmission)
			}
		}
		if len(d.keys) >= r.MaxParticipants {
			return ErrRoundFull
		}
	case s.Shares != nil:
		if r.Phase != PhaseShareKeys {
			return fmt.Errorf("%w: shares in phase %s", ErrWrongPhase, r.Phase)
		}
		if !slices.ContainsFunc(r.Roster, func(k secagg.PublicKeys) bool { return k.ID == org }) {
			return ErrNotParticipant
		}
		if slices.Contains(r.Refused, org) {
			return fmt.Errorf("%w: the organization was refused in this round; it may join the next", ErrNotParticipant)
		}
		if _, dup := d.commitments[org]; dup {
			return ErrDuplicate
		}
		m := s.Shares
		if m.From != org || len(m.Commitment) != 32 || len(m.Shares) != len(r.Roster)-1 {
			return fmt.Errorf("%w: share message must carry a 32-byte commitment and one share per other participant", ErrInvalidSubmission)
		}
		if err := checkSeedCommits(r, org, s.SeedCommitments); err != nil {
			return err
		}
		to := map[string]bool{}
		for _, es := range m.Shares {
			if es.From != org || es.To == org || to[es.To] || len(es.Ciphertext) > 1024 ||
				!slices.ContainsFunc(r.Roster, func(k secagg.PublicKeys) bool { return k.ID == es.To }) {
				return fmt.Errorf("%w: share addressing", ErrInvalidSubmission)
			}
			to[es.To] = true
		}
	case s.Masked != nil:
		if r.Phase != PhaseMaskedInput {
			return fmt.Errorf("%w: masked input in phase %s", ErrWrongPhase, r.Phase)
		}
		if !slices.Contains(r.U2, org) {
			return ErrNotParticipant
		}
		if slices.Contains(r.Refused, org) {
			return fmt.Errorf("%w: the organization was refused in this round; it may join the next", ErrNotParticipant)
		}
		if _, dup := d.inputs[org]; dup {
			return ErrDuplicate
		}
		if err := c.verifyMasked(ctx, r, org, s); err != nil {
			return err
		}
	case s.Reveals != nil:
		if r.Phase != PhaseUnmasking {
			return fmt.Errorf("%w: shares revealed in phase %s", ErrWrongPhase, r.Phase)
		}
		if !slices.Contains(r.U3, org) {
			return ErrNotParticipant
		}
		if slices.Contains(r.Refused, org) {
			return fmt.Errorf("%w: the organization was refused in this round; it may join the next", ErrNotParticipant)
		}
		if _, dup := d.reveals[org]; dup {
			return ErrDuplicate
		}
		if len(s.Reveals) != len(r.U2) {
			return fmt.Errorf("%w: one revealed share per key-sharing participant expected", ErrInvalidSubmission)
		}
		// Shamir x of org: its rank in the sorted roster.
		x := 1 + slices.IndexFunc(r.Roster, func(k secagg.PublicKeys) bool { return k.ID == org })
		of := map[string]bool{}
		for _, rs := range s.Reveals {
			want := secagg.MaskKey
			if slices.Contains(r.U3, rs.Of) {
				want = secagg.SelfMask
			}
			if rs.From != org || rs.Kind != want || of[rs.Of] || !slices.Contains(r.U2, rs.Of) {
				return fmt.Errorf("%w: revealed share addressing", ErrInvalidSubmission)
			}
			if _, err := rs.Share.MarshalBinary(); err != nil || int(rs.Share.X) != x {
				return fmt.Errorf("%w: malformed revealed share", ErrInvalidSubmission)
			}
			of[rs.Of] = true
		}
	}
	return nil
}

// apply records a validated submission in memory.
func (c *Coordinator) apply(s *Submission) {
	d := c.data
	switch {
	case s.Keys != nil:
		d.keys = append(d.keys, *s.Keys)
	case s.Shares != nil:
		d.commitments[s.Org] = s.Shares.Commitment
		if s.SeedCommitments != nil {
			d.seedCommits[s.Org] = s.SeedCommitments
		}
		for _, es := range s.Shares.Shares {
			d.inbox[es.To] = append(slices.Clip(d.inbox[es.To]), es)
		}
	case s.Masked != nil:
		d.inputs[s.Org] = s.Masked
	case s.Reveals != nil:
		d.reveals[s.Org] = s.Reveals
	}
}

// cloneSubmission copies everything a caller could still mutate after
// handing the submission over.
func cloneSubmission(s Submission) Submission {
	if s.Keys != nil {
		k := cloneKeys([]secagg.PublicKeys{*s.Keys})[0]
		s.Keys = &k
	}
	if s.Shares != nil {
		m := *s.Shares
		m.Commitment = slices.Clone(m.Commitment)
		m.Shares = slices.Clone(m.Shares)
		for i := range m.Shares {
			m.Shares[i].Ciphertext = slices.Clone(m.Shares[i].Ciphertext)
		}
		s.Shares = &m
	}
	s.Masked = slices.Clone(s.Masked)
	s.Proof = slices.Clone(s.Proof)
	if s.SeedCommitments != nil {
		sc := make(map[string][]byte, len(s.SeedCommitments))
		for k, v := range s.SeedCommitments {
			sc[k] = slices.Clone(v)
		}
		s.SeedCommitments = sc
	}
	if s.Reveals != nil {
		s.Reveals = slices.Clone(s.Reveals)
		for i := range s.Reveals {
			s.Reveals[i].Share.Y = slices.Clone(s.Reveals[i].Share.Y)
		}
	}
	return s
}

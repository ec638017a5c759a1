package federated

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
)

// Phase is the step a round is in. A round moves forward only:
// advertise_keys → share_keys → masked_input → unmasking → closed, or to
// abandoned from any open phase.
type Phase string

// Round phases.
const (
	PhaseAdvertiseKeys Phase = "advertise_keys"
	PhaseShareKeys     Phase = "share_keys"
	PhaseMaskedInput   Phase = "masked_input"
	PhaseUnmasking     Phase = "unmasking"
	PhaseClosed        Phase = "closed"
	PhaseAbandoned     Phase = "abandoned"
)

// Open reports whether the round still accepts submissions.
func (p Phase) Open() bool { return p != PhaseClosed && p != PhaseAbandoned }

// RoundKind tells a statistics round from a training one.
type RoundKind string

// RoundStatistics is the kind of the round that learns the scaling of a
// task's learned features before its first training round: each
// participant's masked input is, per learned feature, its count, sum and
// sum of squares of the feature's training values (see statsWords), and
// the round's result is a model version carrying the pooled scaling.
const RoundStatistics RoundKind = "statistics"

// RoundEvaluation is the kind of the round that follows the last training
// round (the round limit or the privacy budget reached): each participant
// sends a zero update with the held-out evaluation counts of the final
// model, so that the final version's accuracy is measured like every
// other's. It produces no model version and spends no privacy budget.
const RoundEvaluation RoundKind = "evaluation"

// RoundState is the persisted header of a round: its parameters, the
// participant sets fixed at each phase change, and its outcome. Submissions
// are persisted separately, as an append-only log.
type RoundState struct {
	Number          int     `json:"number"`
	Phase           Phase   `json:"phase"`
	TaskHash        string  `json:"task_hash"`
	BaseVersion     string  `json:"base_version"`
	Session         []byte  `json:"session"`
	Dim             int     `json:"dim"` // model weights + 2 evaluation counters
	ClipNorm        float64 `json:"clip_norm"`
	FracBits        uint    `json:"frac_bits"`
	MaxParticipants int     `json:"max_participants"`
	MaxEvalRecords  int     `json:"max_eval_records"`
	NoiseMultiplier float64 `json:"noise_multiplier"` // 0: no DP
	// Proved rounds mask in the proof group and take a proof with every
	// masked input (see ProofConfig).
	Proved bool `json:"proved,omitempty"`
	// NoiseShare, in a round with distributed DP, is the standard
	// deviation (in quantized units: 2^FracBits per unit of the update) of
	// the discrete Gaussian each participant adds to every weight word of
	// its input before masking; the coordinator then adds no noise. 0:
	// central noise (NoiseMultiplier) or none.
	NoiseShare float64 `json:"noise_share,omitempty"`
	// Kind is RoundStatistics for the statistics round of a task with
	// learned features, empty for a training round.
	Kind      RoundKind `json:"kind,omitempty"`
	Threshold int       `json:"threshold,omitempty"`
	OpenedAt  time.Time `json:"opened_at"`
	// Alive is when the coordinator last ran the round: set at every save
	// of the round and every Config.Heartbeat while it is open. A
	// coordinator that starts on an open round extends its deadlines by
	// the time since (the downtime), so a restart loses no round.
	Alive         time.Time           `json:"alive,omitzero"`
	PhaseDeadline time.Time           `json:"phase_deadline"`
	Deadline      time.Time           `json:"deadline"`
	Roster        []secagg.PublicKeys `json:"roster,omitempty"` // U1
	U2            []string            `json:"u2,omitempty"`     // shared keys
	U3            []string            `json:"u3,omitempty"`     // sent masked input (survivors)
	// Refused are the organizations refused for the rest of this round:
	// a masked input whose proof failed or that is malformed (words not
	// below the field modulus, a wrong length, a body over the route's
	// limit), or a share or reveal message over its route's limit. The
	// phase waits for them no longer, and they drop out of the sum like
	// any other dropout.
	Refused       []string `json:"refused,omitempty"`
	Outcome       string   `json:"outcome,omitempty"`
	ResultVersion string   `json:"result_version,omitempty"`
}

func (r *RoundState) clone() *RoundState {
	c := *r
	c.Roster = append([]secagg.PublicKeys(nil), r.Roster...)
	c.U2 = append([]string(nil), r.U2...)
	c.U3 = append([]string(nil), r.U3...)
	c.Refused = append([]string(nil), r.Refused...)
	return &c
}

// Submission is one protocol message from an organization. Exactly one of
// Keys, Shares, Masked and Reveals is set, matching the round's phase. There
// is no field for a plaintext update: the coordinator cannot receive one.
type Submission struct {
	Round int    `json:"round"`
	Org   string `json:"org"` // set by the coordinator from the caller's identity
	// ModelVersion, when set, must be the round's starting model: a masked
	// input trained on another version is refused (ErrStaleModel).
	ModelVersion string                   `json:"model_version,omitempty"`
	Keys         *secagg.PublicKeys       `json:"keys,omitempty"`
	Shares       *secagg.ShareKeysMessage `json:"shares,omitempty"`
	Masked       secagg.MaskedInput       `json:"masked,omitempty"`
	Reveals      []secagg.RevealedShare   `json:"reveals,omitempty"`
	// SeedCommitments go with Shares in a proved round: the commitment of
	// the pairwise seed shared with each other participant, by id.
	SeedCommitments map[string][]byte `json:"seed_commitments,omitempty"`
	// Proof goes with Masked in a proved round.
	Proof []byte `json:"proof,omitempty"`
	// SampleCount goes with Masked: the training records behind the update.
	// Informational (organizations weigh equally); never checked.
	SampleCount int `json:"sample_count,omitempty"`
}

// Store persists the coordinator's state. SaveFederated applies a Change
// atomically; LoadFederated returns what was saved, or (nil, nil) when
// nothing was. A restarted coordinator resumes from it.
type Store interface {
	LoadFederated(ctx context.Context) (*Snapshot, error)
	SaveFederated(ctx context.Context, ch Change) error
}

// Change is one atomic update of the persisted state.
type Change struct {
	Rounds     []*RoundState `json:"rounds,omitempty"`     // upsert by Number
	Submission *Submission   `json:"submission,omitempty"` // append to its round's log
	Model      *ModelVersion `json:"model,omitempty"`      // append to the history
	// Evaluated replaces the stored version of the same Version: the
	// version with its Metrics, measured by the round after it.
	Evaluated *ModelVersion `json:"evaluated,omitempty"`
	Ledger    *dp.Ledger    `json:"ledger,omitempty"` // replace
}

// Snapshot is the persisted state a coordinator starts from.
type Snapshot struct {
	Round       *RoundState    `json:"round"`       // highest-numbered round, nil if none
	Submissions []Submission   `json:"submissions"` // that round's accepted submissions, in order
	History     []ModelVersion `json:"history"`
	Ledger      *dp.Ledger     `json:"ledger"`
}

// Errors of the coordinator; HTTP maps them to statuses.
var (
	ErrWrongRound        = errors.New("federated: wrong round number")
	ErrWrongPhase        = errors.New("federated: submission does not match the round's phase")
	ErrStaleModel        = errors.New("federated: submission is for another model version")
	ErrNotParticipant    = errors.New("federated: organization is not a participant of this phase")
	ErrDuplicate         = errors.New("federated: already submitted in this phase")
	ErrInvalidSubmission = errors.New("federated: invalid submission")
	ErrRoundFull         = errors.New("federated: round has its maximum number of participants")
	ErrNoOpenRound       = errors.New("federated: no round is open")
	ErrMaxRounds         = errors.New("federated: maximum number of rounds reached")
	ErrBudgetExhausted   = errors.New("federated: privacy budget exhausted")
	ErrConfig            = errors.New("federated: invalid configuration")
	ErrStoreMismatch     = errors.New("federated: stored state does not match the configuration")
)

// RoundError reports a submission for another round than the current one.
type RoundError struct {
	Got, Current int
}

func (e *RoundError) Error() string {
	return fmt.Sprintf("federated: round %d requested, current round is %d", e.Got, e.Current)
}

// Unwrap makes errors.Is(err, ErrWrongRound) hold.
func (e *RoundError) Unwrap() error { return ErrWrongRound }

package api

import (
	"time"

	"github.com/healthagents/healthagents/federated"
)

// Federated learning: the root submission and the v1 round protocol.

// FederatedUpdateResult answers POST /submit-federated-update .
type FederatedUpdateResult struct {
	Round        int    `json:"round" doc:"The round the update entered."`
	Participants int    `json:"participants" doc:"Organizations in that round so far, this one included."`
	ModelHash    string `json:"model_hash" doc:"SHA-256 (64 hex) of the current global model: the round's starting model. The round's result appears at GET /api/v1/federated/model when it closes."`
	ModelVersion string `json:"model_version" doc:"Version of that model."`
	Phase        string `json:"phase" doc:"The round's phase after this submission."`
	Records      int    `json:"records" doc:"Records that carried a usable label for the task."`
}

// OrganizationRequest is the body of POST /api/v1/federated/organizations.
type OrganizationRequest struct {
	OrganizationName string `json:"organization_name" doc:"Display name, 1-200 characters."`
	Endpoint         string `json:"endpoint,omitempty" doc:"The organization's https:// (or http://) URL, for the directory; the service never calls it. Optional."`
	EncryptionKey    string `json:"encryption_key" doc:"The organization's long-term X25519 public key: 32 bytes as 64 hex digits or standard/URL-safe Base64. healthagents participant makes the key pair and registers it by itself (keeping the private key in its state file); by hand: openssl genpkey -algorithm X25519 -out org.pem, then openssl pkey -in org.pem -pubout -outform DER | tail -c 32 | base64."`
}

// NotRegisteredDetail is the 403 detail of a v1 round endpoint called with
// a key whose organization is not registered.
const NotRegisteredDetail = "Forbidden: Insufficient permissions - the organization is not registered (POST /api/v1/federated/organizations)"

// GradientSubmission is the body of POST /api/v1/federated/gradients: the
// masked-input step of secure aggregation.
type GradientSubmission struct {
	OrganizationID     string `json:"organization_id" doc:"Must be the organization of the API key."`
	Round              int    `json:"round"`
	GradientsEncrypted string `json:"gradients_encrypted" doc:"Hex of the masked vector (secagg.MaskedInput binary form: \"HASM\", version 1, uint32 LE length, uint64 LE words); its length must be the round's dim."`
	ModelVersion       string `json:"model_version" doc:"The round's starting model version the update was trained from."`
	SampleCount        int    `json:"sample_count" doc:"Training records used; informational (organizations weigh equally)."`
	Proof              string `json:"proof,omitempty" doc:"In a proved round (the round's proved is true): hex of the Groth16 proof that the vector masks an update within the clip bound and evaluation counts within eval_bound (package federated/normproof). Required there, refused elsewhere."`
}

// FederatedAccepted answers an accepted protocol message.
type FederatedAccepted struct {
	Accepted     bool   `json:"accepted"`
	Round        int    `json:"round" doc:"The round the message was accepted for."`
	CurrentRound int    `json:"current_round" doc:"The round now open (the next one, if this message closed the round)."`
	Phase        string `json:"phase" doc:"Phase of the current round."`
	Participants int    `json:"participants"`
}

// GlobalModel answers GET /api/v1/federated/model.
type GlobalModel struct {
	ModelVersion             string           `json:"model_version" example:"1.0.3"`
	ModelHash                string           `json:"model_hash" doc:"SHA-256 hex of the canonical weight encoding."`
	Weights                  string           `json:"weights" doc:"Hex of the canonical weight encoding (\"HAFW\", version 1, uint32 LE count, float64 LE weights)."`
	Accuracy                 *float64         `json:"accuracy" doc:"Held-out accuracy (0-1) summed over the participants' held-out records (eval_samples of them), null before any round measured a version. It is the accuracy of accuracy_model_version: each version is measured by the round after it (the round's participants score its starting model), the final version by the evaluation round that follows the last training round. So model_version equals accuracy_model_version once the run has ended."`
	AccuracyModelVersion     string           `json:"accuracy_model_version,omitempty" doc:"The version the accuracy figures belong to: the latest version a round has measured."`
	EvalSamples              int              `json:"eval_samples,omitempty"`
	EvalParticipants         int              `json:"eval_participants,omitempty" doc:"Organizations that evaluated at least one held-out record (each bounded by its registered cohort size)."`
	MeanAccuracy             *float64         `json:"mean_accuracy,omitempty" doc:"Unweighted mean of the organizations' held-out accuracies, from the secure sum (no single figure is revealed)."`
	AccuracyStdDev           *float64         `json:"accuracy_stddev,omitempty" doc:"Population standard deviation of the organizations' held-out accuracies: the spread behind the pooled figure."`
	OrganizationsContributed int              `json:"organizations_contributed" doc:"Organizations whose updates made this version."`
	TrainingRound            int              `json:"training_round" doc:"The round that produced this version; -1 for the initial model."`
	CurrentRound             int              `json:"current_round"`
	EpsilonSpent             float64          `json:"epsilon_spent" doc:"Differential-privacy epsilon spent by the whole run so far (0 without DP)."`
	Scaling                  []LearnedScaling `json:"scaling,omitempty" doc:"The learned features' mean and scale that the weights were trained with (tasks with learned features, once the statistics round closed)."`
	// What it takes to use the weights without this service (the ONNX
	// export, ?format=onnx, holds the same).
	ModelType    string         `json:"model_type" enum:"logistic_regression,softmax"`
	WeightValues []float64      `json:"weight_values" doc:"The weights as numbers, in model order: logistic_regression, the coefficient of each feature (in features order) then the bias, P(positive) = sigmoid(w·z + b); softmax, class after class (classes order), the coefficients then the bias, P = softmax of the class scores."`
	Features     []ModelFeature `json:"features" doc:"The model's inputs in order and how a raw value x becomes its input z: x clipped to range (learned features), z = (x - mean) / scale clamped to [-clamp_z, clamp_z]; a missing value is z = 0."`
	ClampZ       float64        `json:"clamp_z"`
	Classes      []string       `json:"classes" doc:"The classes in the order of the probabilities (ONNX output probabilities): negative then positive for logistic_regression, label.classes for softmax."`
}

// ModelFeature is one input of the global model and its standardization.
type ModelFeature struct {
	Name   string    `json:"name"`
	Column string    `json:"column,omitempty" doc:"The CSV column the participants read it from."`
	Mean   float64   `json:"mean"`
	Scale  float64   `json:"scale" doc:"0 for a learned feature before its statistics round closed."`
	Range  []float64 `json:"range,omitempty" doc:"[min, max] of a learned feature: the raw value is clipped to it first."`
}

// LearnedScaling is the mean and scale of one learned feature, learned by
// the statistics round from a secure sum over the participants.
type LearnedScaling struct {
	Name  string  `json:"name"`
	Mean  float64 `json:"mean"`
	Scale float64 `json:"scale" doc:"Population standard deviation of the values clipped to the feature's range."`
	Count int64   `json:"count" doc:"Training values pooled over the round's participants."`
}

// AdvertisedKeys is one organization's public keys of a round.
type AdvertisedKeys struct {
	OrganizationID  string `json:"organization_id"`
	CipherPublicKey string `json:"cipher_public_key" doc:"X25519, 64 hex."`
	MaskPublicKey   string `json:"mask_public_key" doc:"X25519, 64 hex."`
}

// KeysSubmission is the body of POST /api/v1/federated/rounds/{round}/keys.
type KeysSubmission struct {
	CipherPublicKey string `json:"cipher_public_key" doc:"Fresh X25519 public key sealing shares, 64 hex."`
	MaskPublicKey   string `json:"mask_public_key" doc:"Fresh X25519 public key of the pairwise masks, 64 hex."`
}

// SealedShare carries shares from one organization to another.
type SealedShare struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Ciphertext string `json:"ciphertext" doc:"XChaCha20-Poly1305 ciphertext, hex."`
}

// SharesSubmission is the body of POST /api/v1/federated/rounds/{round}/shares.
type SharesSubmission struct {
	Commitment string        `json:"commitment" doc:"SHA-256 commitment to the self-mask seed, 64 hex."`
	Shares     []SealedShare `json:"shares" doc:"One per other roster member; from is the caller."`
	// SeedCommitments go with the shares in a proved round.
	SeedCommitments map[string]string `json:"seed_commitments,omitempty" doc:"In a proved round: for every other roster member, the commitment (32 bytes, 64 hex) to the pairwise mask seed shared with it; both ends must publish the same one."`
}

// RevealedShare is one share handed over in the unmasking phase.
type RevealedShare struct {
	Of    string `json:"of" doc:"The organization whose secret this is a share of."`
	Kind  string `json:"kind" enum:"self_mask,mask_key"`
	Share string `json:"share" doc:"Shamir share, hex: x (uint16 BE) then y (66 bytes)."`
}

// RevealsSubmission is the body of POST /api/v1/federated/rounds/{round}/reveals.
type RevealsSubmission struct {
	Reveals []RevealedShare `json:"reveals"`
}

// FederatedRound is the current round as the calling organization sees it.
type FederatedRound struct {
	Round           int              `json:"round"`
	Phase           string           `json:"phase" enum:"advertise_keys,share_keys,masked_input,unmasking"`
	TaskHash        string           `json:"task_hash"`
	ModelVersion    string           `json:"model_version" doc:"The round's starting model."`
	ModelHash       string           `json:"model_hash"`
	Weights         string           `json:"weights" doc:"Hex canonical encoding of the starting model."`
	Session         string           `json:"session" doc:"32-byte session id, hex."`
	Dim             int              `json:"dim" doc:"Masked vector length: weights + 2 evaluation counters."`
	ClipNorm        float64          `json:"clip_norm"`
	FracBits        uint             `json:"frac_bits"`
	MaxParticipants int              `json:"max_participants"`
	MaxEvalRecords  int              `json:"max_eval_records"`
	Threshold       int              `json:"threshold,omitempty"`
	PhaseDeadline   time.Time        `json:"phase_deadline"`
	Deadline        time.Time        `json:"deadline"`
	Participants    int              `json:"participants"`
	Roster          []AdvertisedKeys `json:"roster,omitempty" doc:"Advertised keys, from share_keys on."`
	SharedKeys      []string         `json:"shared_keys,omitempty" doc:"Organizations that shared keys (U2), from masked_input on."`
	Inbox           []SealedShare    `json:"inbox,omitempty" doc:"Shares addressed to the caller, in masked_input."`
	Survivors       []string         `json:"survivors,omitempty" doc:"Organizations that sent masked input (U3), in unmasking."`
	Done            bool             `json:"done" doc:"The caller has answered the current phase."`
	Proved          bool             `json:"proved,omitempty" doc:"A proved round: masks live in the BN254 scalar field, shares carry seed_commitments, and the masked vector needs a proof."`
	EvalBound       int              `json:"eval_bound,omitempty" doc:"The most held-out records the caller may report: its registered cohort size, at most max_eval_records."`
	NoiseShare      float64          `json:"noise_share,omitempty" doc:"Distributed DP (FEDERATED_DP=distributed): the standard deviation, in quantized units (2^frac_bits per unit), of the discrete Gaussian the caller adds to every weight word of its quantized update before masking; the coordinator adds no noise. Absent: central noise or none."`
	Kind            string           `json:"kind,omitempty" enum:"statistics,evaluation" doc:"statistics: the round that learns the scaling of the task's learned features (the masked vector holds, per learned feature, the count, sum and sum of squares of the training values in fixed point); evaluation: the round after the last training round, whose participants send a zero update with their held-out counts of the final model (no version made, no privacy spent); absent for a training round."`
	Scaling         []LearnedScaling `json:"scaling,omitempty" doc:"The starting model's learned scaling, which the round trains with."`
	Previous        *RoundEnd        `json:"previous,omitempty" doc:"How the round before this one ended: closed with its model version, or abandoned and why."`
}

// RoundEnd is how a round ended (federated.RoundEnd).
type RoundEnd = federated.RoundEnd

// TaskFeature is one feature of a task: its name, the CSV column it is read
// from, and the scaling every participant applies.
type TaskFeature struct {
	Name    string    `json:"name"`
	Column  string    `json:"column,omitempty"`
	Scaling string    `json:"scaling,omitempty" enum:"given,learned"`
	Mean    float64   `json:"mean"`
	Scale   float64   `json:"scale"`
	Range   []float64 `json:"range,omitempty" doc:"[min, max] of a learned feature: every value is clipped to it."`
}

// TaskLabel names the label column and its values.
type TaskLabel struct {
	Column   string   `json:"column,omitempty"`
	Positive string   `json:"positive,omitempty"`
	Negative string   `json:"negative,omitempty"`
	Classes  []string `json:"classes,omitempty" doc:"Class values of a softmax model, in class order."`
}

// TaskModel is the model of a task.
type TaskModel struct {
	Type string  `json:"type" enum:"logistic_regression,softmax"`
	L2   float64 `json:"l2"`
}

// TaskDefinition is a task in the task-file format (FEDERATED_TASK): a
// participant may load it as its task file.
type TaskDefinition struct {
	ID            string        `json:"id"`
	Features      []TaskFeature `json:"features"`
	Label         TaskLabel     `json:"label"`
	Model         TaskModel     `json:"model"`
	LearningRate  float64       `json:"learning_rate"`
	LocalEpochs   int           `json:"local_epochs"`
	BatchSize     int           `json:"batch_size,omitempty"`
	HeldOut       float64       `json:"held_out,omitempty" doc:"Fraction of each participant's records kept for evaluation."`
	ReferenceDate string        `json:"reference_date,omitempty"`
	ClampZ        float64       `json:"clamp_z,omitempty"`
	Missing       string        `json:"missing,omitempty" enum:"refuse,mean,zero" doc:"What an empty or NA cell of a participant's CSV means: refuse (the default: the participant refuses to start), mean (imputed as the feature's mean) or zero."`
}

// FederatedPrivacy is the run's privacy budget and how much of it is spent.
type FederatedPrivacy struct {
	Enabled          bool    `json:"enabled" doc:"False when FEDERATED_DP=off."`
	Epsilon          float64 `json:"epsilon,omitempty" doc:"Budget of the whole run."`
	Delta            float64 `json:"delta,omitempty"`
	EpsilonSpent     float64 `json:"epsilon_spent" doc:"Spent by the rounds released so far (RDP accountant)."`
	EpsilonRemaining float64 `json:"epsilon_remaining"`
	RoundsReleased   int     `json:"rounds_released"`
	Noise            string  `json:"noise,omitempty" enum:"central,distributed" doc:"central: the coordinator adds Gaussian noise to the unmasked sum; distributed: each participant adds a discrete Gaussian share before masking (FEDERATED_DP=distributed)."`
}

// FederatedTask answers GET /api/v1/federated/task: the task the coordinator
// trains, the run's settings and its privacy budget.
type FederatedTask struct {
	ID                  string           `json:"id"`
	TaskHash            string           `json:"task_hash" doc:"SHA-256 of the task; every round carries it."`
	Definition          *TaskDefinition  `json:"definition,omitempty" doc:"The task file; absent for the built-in diagnosis task."`
	MaxRounds           int              `json:"max_rounds"`
	CurrentRound        int              `json:"current_round"`
	Phase               string           `json:"phase"`
	Stopped             string           `json:"stopped,omitempty" doc:"Why no further round opens (maximum rounds or privacy budget), once so."`
	ClipNorm            float64          `json:"clip_norm"`
	MinParticipants     int              `json:"min_participants"`
	TargetParticipants  int              `json:"target_participants,omitempty"`
	RoundTimeoutSeconds int              `json:"round_timeout_seconds"`
	Privacy             FederatedPrivacy `json:"privacy"`
	OrganizationID      string           `json:"organization_id,omitempty" doc:"The calling key's organization: the id it takes part in rounds under."`
	Proofs              bool             `json:"proofs" doc:"Every round is a proved one (FEDERATED_PROOFS=on): participants fetch the proving key of their round's shape from GET /api/v1/federated/proof-keys/{shape}."`
	LearnedScaling      []LearnedScaling `json:"learned_scaling,omitempty" doc:"The scaling the statistics round learned for the task's learned features, which every participant trains and evaluates with; absent before that round closed."`
	Default             bool             `json:"default" doc:"The default task: the one the unscoped endpoints (/api/v1/federated/task, /rounds/current, /submit-federated-update) serve."`
	Source              string           `json:"source,omitempty" enum:"config,api" doc:"config: FEDERATED_TASK (or the built-in task); api: created with POST /api/v1/federated/tasks."`
	CreatedAt           *time.Time       `json:"created_at,omitempty" doc:"When an admin created the task over the API."`
}

// FederatedTaskList answers GET /api/v1/federated/tasks: the page asked
// for (every task without offset and limit) and how many tasks there are.
type FederatedTaskList struct {
	Tasks []FederatedTask `json:"tasks"`
	Total int             `json:"total" doc:"Tasks in the whole list."`
}

// FederatedTaskRequest is the body of POST /api/v1/federated/tasks: a task
// in the task-file format and the settings of its run.
type FederatedTaskRequest struct {
	Task     TaskDefinition        `json:"task" doc:"The task, as a FEDERATED_TASK file holds it; its id names the task."`
	Settings *FederatedRunSettings `json:"settings,omitempty" doc:"The run's settings; an absent one takes the service's FEDERATED_* value."`
}

// FederatedRunSettings are the settings of one task's run, each optional
// (the service's FEDERATED_* value when absent).
type FederatedRunSettings struct {
	DP                  *bool    `json:"dp,omitempty" doc:"Differential privacy on or off (FEDERATED_DP)."`
	DPNoise             *string  `json:"dp_noise,omitempty" enum:"central,distributed" doc:"Who adds the noise with DP on: the coordinator (central) or each participant before masking (distributed; FEDERATED_DP=distributed)."`
	Epsilon             *float64 `json:"epsilon,omitempty" doc:"The whole run's epsilon, in (0, 100] (FEDERATED_EPSILON)."`
	Delta               *float64 `json:"delta,omitempty" doc:"In (0, 1) (FEDERATED_DELTA)."`
	ClipNorm            *float64 `json:"clip_norm,omitempty" doc:"L2 bound of each update (FEDERATED_CLIP_NORM)."`
	Rounds              *int     `json:"rounds,omitempty" doc:"Rounds of the run (FEDERATED_ROUNDS)."`
	MinParticipants     *int     `json:"min_participants,omitempty" doc:"At least 3 (FEDERATED_MIN_PARTICIPANTS)."`
	TargetParticipants  *int     `json:"target_participants,omitempty" doc:"Closes key advertisement early once reached (FEDERATED_TARGET_PARTICIPANTS)."`
	RoundTimeoutSeconds *int     `json:"round_timeout_seconds,omitempty" doc:"1 to 604800 (FEDERATED_ROUND_TIMEOUT)."`
}

// ProofKeys answers GET /api/v1/federated/proof-keys/{shape}: the Groth16
// keys of one shape of the update-bound circuit (package
// federated/normproof), set up once by the coordinator and kept under
// DATA_DIR.
type ProofKeys struct {
	Shape        string `json:"shape" example:"w5-e5-p2-b25" doc:"wW-eE-pP-bB: W weights, E evaluation words, P peers, B bits."`
	ProvingKey   string `json:"proving_key" doc:"Base64 of the compressed BN254 proving key (gnark encoding)."`
	VerifyingKey string `json:"verifying_key" doc:"Base64 of the compressed verifying key."`
}

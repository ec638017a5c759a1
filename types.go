package healthagents

import "github.com/healthagents/healthagents/cipher"

// PatientData is the encrypted envelope every request carries (see
// cipher.Envelope and docs/decisions/cipher.md).
type PatientData = cipher.Envelope

// EligibilityRequest is the body of POST /verify-eligibility.
type EligibilityRequest struct {
	PatientData   *PatientData `json:"patient_data" required:"true" doc:"The encrypted patient record."`
	ProcedureCode string       `json:"procedure_code" required:"true" maxLength:"64" doc:"PROC001..PROC005, or a CPT/HCPCS code mapped onto them (e.g. 70551)." example:"PROC001"`
}

// EligibilityResult is the root family's eligibility result.
type EligibilityResult struct {
	Eligible              bool    `json:"eligible" doc:"The patient is eligible for the procedure."`
	CoveragePct           float64 `json:"coverage_pct" minimum:"0" maximum:"100" doc:"Percentage of the cost covered; 0 when not eligible."`
	PrivacyPreserved      bool    `json:"privacy_preserved" doc:"Always true: no raw medical data is returned."`
	ProcedureCode         string  `json:"procedure_code" doc:"The procedure that was checked, as requested."`
	RequiresAuthorization bool    `json:"requires_authorization" doc:"Prior authorization is needed for this procedure class."`
	ZKProofVerified       bool    `json:"zk_proof_verified" doc:"A Groth16 proof of this decision was verified by EVM code in a mined transaction."`
	Reason                *string `json:"reason" doc:"Why the patient is not eligible; null when eligible."`

	// DecisionRecord (blockchain_tx, statement, issuer) is what a third
	// party needs to check the decision from the chain alone
	// (docs/verify.md); the spec's fields above are unchanged.
	DecisionRecord

	// Proof is the proof and chain record behind ZKProofVerified, nil when
	// no Attestor is configured: the in-process detail (circuit, proof
	// bytes, public inputs, block) behind DecisionRecord. The answer
	// carries DecisionRecord instead: the proof bytes and inputs are in the
	// transaction it names.
	Proof *Attestation `json:"-"`
}

// DecisionRecord is the chain record of a root-family decision, beside the
// spec's fields: the transaction in which the registry verified its proof
// and recorded its statement, and the statement. Empty (and absent from
// the JSON) without proofs.
type DecisionRecord struct {
	BlockchainTx string     `json:"blockchain_tx,omitempty" doc:"Hash of the mined transaction in which the registry verified this decision's proof and recorded its statement, or (CHAIN_ANCHOR=batch) recorded the Merkle root of the batch holding it, which statement.batch leads to; absent when the service runs without proofs. healthagents verify-decision --tx takes it." example:"0xf308ec7a9ef3bad3cae65bd3359f5dee2d17955df41fbd670a070f545bbc8704"`
	Statement    *Statement `json:"statement,omitempty" doc:"What the proof states: the digest recorded on chain and its opening. Show it to whoever should check this decision (healthagents verify-decision --statement takes this whole answer); it is never logged or sent in events."`
	Issuer       string     `json:"issuer,omitempty" doc:"Who vouches for the coverage the proof was made from: \"self\" (the service's own issuer key) or the registered payer's name." example:"self"`
	// ProofData and PublicInputs are the decision's proof when it was
	// anchored in a batch (statement.batch set): the batch's transaction
	// records a Merkle root, not the proof, so a third party re-verifies
	// it from the answer (docs/verify.md, "Batches"). Absent otherwise:
	// a single-record decision's proof is in its transaction.
	ProofData    string   `json:"proof_data,omitempty" doc:"The Groth16 proof, hex (256 bytes in the Solidity verifier's layout); only when statement.batch is set (the batch's transaction does not carry it). healthagents verify-decision --statement reads it from this answer."`
	PublicInputs []string `json:"public_inputs,omitempty" doc:"The proof's public inputs, hex field elements: the statement's [issuer_key_hash, digest, circuit_id]; only with proof_data."`
}

// decisionRecord is the DecisionRecord of a verified attestation (zero for
// nil or unverified).
func decisionRecord(a *Attestation) DecisionRecord {
	if a == nil || !a.Verified {
		return DecisionRecord{}
	}
	r := DecisionRecord{BlockchainTx: a.TxHash, Statement: a.Statement, Issuer: a.Issuer}
	if a.Statement != nil && a.Statement.Batch != nil {
		r.ProofData, r.PublicInputs = a.ProofData, a.PublicInputs
	}
	return r
}

// PrescriptionRequest is the body of POST /validate-prescription.
type PrescriptionRequest struct {
	PatientData *PatientData `json:"patient_data" required:"true" doc:"The encrypted patient record."`
	DrugCode    string       `json:"drug_code" required:"true" maxLength:"64" doc:"RxNorm RxCUI, NDC (any hyphenated form or 11 digits) or generic name." example:"11289"`
}

// PrescriptionResult is the root family's prescription result.
type PrescriptionResult struct {
	Valid               bool   `json:"valid" doc:"The prescription is safe and approved."`
	DrugCode            string `json:"drug_code" doc:"The drug code validated, as requested."`
	InteractionsChecked bool   `json:"interactions_checked" doc:"Interactions with the patient's current medications were checked."`
	ZKProofVerified     bool   `json:"zk_proof_verified" doc:"Eligibility was verified cryptographically: a Groth16 proof that the patient's plan covers this drug on the service date (coverage active, date within the policy window, drug not excluded) was verified by EVM code in a mined transaction. False when there is no such proof, including when the proof shows the drug is not covered (e.g. a lapsed policy); valid is decided by the clinical checks and does not depend on it."`
	CrossChainOracle    string `json:"cross_chain_oracle" doc:"Pharmacy-availability statement. Never a made-up confirmation."`
	Reason              string `json:"reason,omitempty" doc:"Why valid is false in a 200 answer: a current medication or allergy of the record that could not be identified, named as the record has it (an interaction or contraindication is a 422 instead)." example:"Review required: the patient's medication \"Tylenol PM\" could not be identified, so interactions and contraindications with it were not checked"`

	// DecisionRecord: see EligibilityResult. A proof verified on chain that
	// the drug is not covered is recorded too (its statement says so), so
	// blockchain_tx can be present with zk_proof_verified false.
	DecisionRecord

	// Proof is the proof and chain record behind ZKProofVerified; see
	// EligibilityResult.Proof. It can be a proof verified on chain that the
	// drug is not covered (its Covered output 0): then ZKProofVerified is
	// false although Proof.Verified is true.
	Proof *Attestation `json:"-"`
}

// Attestation is a proof of a decision and the record of its verification on
// chain.
type Attestation struct {
	Circuit      string   `json:"circuit"`
	ProofData    string   `json:"proof_data"`
	PublicInputs []string `json:"public_inputs"`
	TxHash       string   `json:"blockchain_tx"`
	BlockNumber  uint64   `json:"block_number"`
	Verified     bool     `json:"verified"`
	// Statement is what the proof states (digest and opening), nil for the
	// first circuits, whose public inputs were the statement.
	Statement *Statement `json:"statement,omitempty"`
	// Issuer says who vouches for the coverage the proof was made from:
	// "self" (the service's own key, COVERAGE_TRUST=self) or the registered
	// payer's name.
	Issuer string `json:"issuer,omitempty"`
	// Covered is, for a prescription, whether the proof states that the
	// plan covers every drug of the request on the service date.
	Covered bool `json:"-"`
}

// Health is the body of GET /health.
type Health struct {
	Status  string `json:"status" enum:"healthy" example:"healthy"`
	Version string `json:"version" example:"0.1.0"`
	Message string `json:"message"`
	// Checked names the dependencies the answer checked (database, chain,
	// and redis and ipfs when configured).
	Checked []string `json:"checked,omitempty" doc:"The dependencies this answer checked." example:"[\"database\",\"chain\"]"`
}

// SystemStatus is the body of GET /status.
type SystemStatus struct {
	Status            string          `json:"status" enum:"operational,degraded" example:"operational"`
	Agents            AgentsStatus    `json:"agents"`
	FederatedLearning FederatedStatus `json:"federated_learning"`
	Blockchain        ChainStatus     `json:"blockchain"`
	// Issuer is the COVERAGE_TRUST policy: "self" when coverage without a
	// payer credential is proven under the service's own issuer key, whose
	// key hash SelfIssuerKeyHash is (the issuer of such statements on
	// chain); "registered" when only registered payers' credentials are.
	// Empty without a policy.
	Issuer            string `json:"issuer,omitempty" enum:"self,registered" example:"self"`
	SelfIssuerKeyHash string `json:"self_issuer_key_hash,omitempty" doc:"Poseidon(Ax, Ay) of the service's own issuer key, decimal: the issuer key hash of the statements it signs itself."`
	// ZKSetup is the kind of trusted setup behind the proving keys:
	// "development" (a single-party setup on the server: whoever saw its
	// memory can forge proofs) or "ceremony" (ZK_KEYS_DIR, from a
	// multi-party ceremony: sound if one participant was honest).
	ZKSetup string `json:"zk_setup,omitempty" enum:"development,ceremony" example:"development" doc:"Trusted setup behind the proving keys: development (single-party, on this server) or ceremony (multi-party; see docs/ceremony.md)."`
}

// AgentsStatus reports each agent.
type AgentsStatus struct {
	Eligibility    string `json:"eligibility" example:"active"`
	Prescription   string `json:"prescription" example:"active"`
	DiagnosisModel string `json:"diagnosis_model" enum:"trained,untrained" doc:"trained once a global model version exists."`
}

// FederatedStatus reports the federated coordinator.
type FederatedStatus struct {
	CurrentRound int `json:"current_round" doc:"0-indexed round now open."`
	Participants int `json:"participants" doc:"Participants that have contributed to the current round."`
}

// ChainStatus names the chain proofs are verified on.
type ChainStatus struct {
	Endpoint string `json:"endpoint" example:"embedded"`
	Network  string `json:"network" example:"simulated"`
	// Registry is the GovernedRegistry that records every decision: the
	// address a third party pins when it checks one (verify-decision
	// --registry, docs/verify.md). Empty without a chain.
	Registry string `json:"registry,omitempty" example:"0x5FbDB2315678afecb367f032d93F642f64180aa3" doc:"Address of the GovernedRegistry that records every decision: what a third party pins when checking one (docs/verify.md)."`
	// ChainID is the chain's EIP-155 id, decimal.
	ChainID string `json:"chain_id,omitempty" example:"1337" doc:"EIP-155 chain id, decimal."`
	// Anchor is CHAIN_ANCHOR: "each" (a registry transaction per decision)
	// or "batch" (a batch's Merkle root per transaction).
	Anchor string `json:"anchor,omitempty" enum:"each,batch" example:"batch" doc:"How decisions are recorded (CHAIN_ANCHOR): each, one registry transaction per decision; batch, one transaction records a batch's Merkle root and each decision's statement.batch holds its path (docs/decisions/batch-anchoring.md)."`
}

// Version is the service version reported by /health.
const Version = "0.1.0"

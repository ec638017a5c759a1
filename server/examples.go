// Examples of every request and response body in the OpenAPI document.

package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/webhook"
)

// ExampleFernetKey is the Fernet key the document's example envelope
// (ExampleEnvelope) was sealed with, published so that anyone can open
// it. Never seal real records with it.
const ExampleFernetKey = "CpZPMLWfQP-hxEw4mz23w1ad8LbF6YME6BpJhzMsFkk="

// ExampleOrganizationKey is the organization registration example's X25519
// public key: RFC 7748's test vector (section 6.1, Alice), whose private
// key is published there, so the example is a key pair anyone can check
// (TestExampleOrganizationKey). Never register it for real.
const ExampleOrganizationKey = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"

// ExampleEnvelope returns a real PatientData envelope: testdata/record.json
// (PT-000123, active PPO coverage, type 2 diabetes, on warfarin) sealed
// with ExampleFernetKey by `healthagents seal`, a new copy at each call
// (the document's examples cannot be changed through it).
// TestExampleEnvelopeOpens opens it.
func ExampleEnvelope() cipher.Envelope { return exampleEnvelope }

var exampleEnvelope = cipher.Envelope{
	PatientID:     "PT-000123",
	EncryptedData: "gAAAAABrBp7qdI6NclDuV94DdzBYlpRCHm8fhx9o6-PcRWBOCZrw8EsHM56Dah6ch_-YYTpyPTuQJuiueZ1maLegf54cD-lDbZsBpvsEyN5hm7GPOibR1wu5ZEbJBD6zcem_-LztLS6cHaZZ8C_5mPRPywrPXyw0CTtb1yP9roYWJMq_EytEMHTtQZQg7aGdq4U67ee7_v6bLGq8O4fbQNWMeTnpDA8MA9m4oRFTdGVKtpv3YlVDJGCGCUk-UAaXdOzwIxYzMbFEBTnWkBxMDo4k2LhAqI7bcDwiCBD2G40q_oubyFzW9LCUEm7R0lNlQcwePLHwZJ5LMesClvvOreZ-9Ae1DWK6lc6RAD5DethQHhkDfYcZ5IfNPwrpJ1hnSVpe5_vrRRYQ6RNUIcuGw5bNyAcr3Q7w_RJBo75_e87Ikz0y3XYgnqeZ8jhmdvFA7-Pw0e6bxsTbnCUnLojkUVB507seWsThzs1SRXLuoH3dABF9N9ktSfGYJEm4LyKFprCtmFIG8mlrvhFZ8IjaAhEhHHT03wzNvC8HJCmKisncCgzglDS-RJDJXvazRGLLFjajy7HfqxS0hUsefIfxix9c_VtRNJpQYJRNza-bvfKm2VY82V04mrjN36qKMJRt5MJYNhOnC6yrxi9EWEKpGoz5VZbZliHW00aki3U_NUuYL-WEoGZ3piJ_qf4_pFvzyAmCeCYtUcpGBlgnsCsEgoITEnb-9_2kaJngmfv0DQw7-BmHd_yveCc=",
	IPFSCID:       "bafkreibg6vmnehgrzn7id2rb5heznyl7p7ipmwxi4wvspsjrk4dpwifmaq",
	DataHash:      "f45df1ba70e406516f112944a584ab48c425af0f78807aefd3b0925593e60298",
}

// exampleProof is a real Groth16 proof of an eligibility decision (PT-000123,
// CPT 70551), its public inputs [issuerKeyHash, digest, circuitId] and the
// transaction in which the registry verified it and recorded the statement
// (exampleStatement), as POST /api/v1/eligibility/verify answered it.
var exampleProof = healthagents.V1Proof{
	ProofData: "0x2f7a9246aa6d7e9cfcf56e4c9e11fc3d352a9fd4604b8f2108f19b6dcbb8a1ef00ad7d6b1d9aa80f8d37bf007e8fd073f40b908e482dc9dd09c28f7db4ae2099078141608c0a89a6b56cd95177ae4bac6ebdfcac4282ee19200f1df75f24920f167001763c7315eaff5c664e49c376e89f6b52e118a4e717f75fa19b62180fbf1c49851cf06dc73a6d4ed5004a3aa7932ea897a8b47a1105708c043b99d0380312f1219d7dd42720562575440a9a519a4a7bf865fb32a5689fa496e7a29cfe952f68da6e75f46a7264d44fed264b78d0308f989c1693006300dbc4928bd9747825affccb22c54cce61fdc1232a5fd5d671f732dc5ce57de91edbd72d1859814d",
	PublicInputs: []string{
		"0x2dfb9cc47579393ef9c842abb7ff9df64b66b72db8814fd045ec6b0bcd978174",
		"0x270c53bf11da41fa8f7b78736a9897e679b96be38ff1a195b194e849c5ceb3ce",
		"0x224178cbdcb795260a29948630e126dacc2999c6d570d8c54489805f7c43df0a",
	},
	BlockchainTx: "0xf308ec7a9ef3bad3cae65bd3359f5dee2d17955df41fbd670a070f545bbc8704",
}

// exampleStatement is that decision's statement: the digest recorded on
// chain and its opening.
var exampleStatement = healthagents.Statement{
	Digest: "17661981255701421781587164190745920869902105753404737501340211279095921554382",
	Opening: healthagents.StatementOpening{
		Circuit: "eligibility-v3", CircuitID: "15494315616716666158477974932193987344468426310401312397633719265027103645450",
		IssuerKeyHash:   "20798638768457414661854865514315291338517721271540350325324351324378071794036",
		RevocationNonce: 16284785698725355310,
		Fields: []healthagents.StatementField{
			{Name: "subject_commitment", Value: "14849358966481868509413385421704014062932886550586018786144504849287671232320"},
			{Name: "payer_id", Value: "232736699700", Text: "60054"},
			{Name: "plan_id", Value: "5787212577059589188", Text: "PPO-GOLD"},
			{Name: "revocation_nonce", Value: "16284785698725355310", Text: "16284785698725355310"},
			{Name: "procedure", Value: "237031994673", Text: "70551"},
			{Name: "procedure_class", Value: "22608498519978033", Text: "PROC001"},
			{Name: "service_day", Value: "20782", Text: "2026-11-25"},
			{Name: "eligible", Value: "1", Text: "true"},
			{Name: "coverage_pct", Value: "80", Text: "80"},
			{Name: "requires_authorization", Value: "1", Text: "true"},
			{Name: "deductible_met", Value: "1", Text: "true"},
			{Name: "copay_cents", Value: "2500", Text: "25.00"},
			{Name: "salt", Value: "5003329066751894352030756081329564591738178016835306496190809258149122846381"},
		},
	},
}

// exampleRxStatement is the statement of a root-family prescription
// decision (PT-000123, metformin 6809), as POST /validate-prescription
// answered it: every slot of the prescription-v4 opening, unused ones 0
// (the values of a real prescription-v2 decision, with v3's unidentified
// field, 0, and the digest recomputed).
var exampleRxStatement = healthagents.Statement{
	Digest: "19577467528323570920179090000653910088963201303421302018891574385168787394075",
	Opening: healthagents.StatementOpening{
		Circuit: "prescription-v4", CircuitID: "13571369123032718131311179964213705478103465897301913556680861286380119670922",
		IssuerKeyHash:   "4002803404836251463291069294238916188237238979992664917585951602464482097093",
		RevocationNonce: 6198251752343862,
		Fields: []healthagents.StatementField{
			{Name: "subject_commitment", Value: "20851365383198694061786979648457922021736449913951222379061760069406359021185"},
			{Name: "payer_id", Value: "232736699700", Text: "60054"},
			{Name: "plan_id", Value: "5787212577059589188", Text: "PPO-GOLD"},
			{Name: "revocation_nonce", Value: "6198251752343862", Text: "6198251752343862"},
			{Name: "service_day", Value: "20785", Text: "2026-11-28"},
			{Name: "drug_1", Value: "909652025", Text: "6809"}, {Name: "covered_1", Value: "1", Text: "true"}, {Name: "formulary_tier_1", Value: "1", Text: "1"}, {Name: "clinical_1", Value: "64", Text: "interaction=none contraindication=none valid=true"},
			{Name: "drug_2", Value: "0"}, {Name: "covered_2", Value: "0", Text: "false"}, {Name: "formulary_tier_2", Value: "0", Text: "0"}, {Name: "clinical_2", Value: "0"},
			{Name: "drug_3", Value: "0"}, {Name: "covered_3", Value: "0", Text: "false"}, {Name: "formulary_tier_3", Value: "0", Text: "0"}, {Name: "clinical_3", Value: "0"},
			{Name: "drug_4", Value: "0"}, {Name: "covered_4", Value: "0", Text: "false"}, {Name: "formulary_tier_4", Value: "0", Text: "0"}, {Name: "clinical_4", Value: "0"},
			{Name: "drug_5", Value: "0"}, {Name: "covered_5", Value: "0", Text: "false"}, {Name: "formulary_tier_5", Value: "0", Text: "0"}, {Name: "clinical_5", Value: "0"},
			{Name: "drug_6", Value: "0"}, {Name: "covered_6", Value: "0", Text: "false"}, {Name: "formulary_tier_6", Value: "0", Text: "0"}, {Name: "clinical_6", Value: "0"},
			{Name: "drug_7", Value: "0"}, {Name: "covered_7", Value: "0", Text: "false"}, {Name: "formulary_tier_7", Value: "0", Text: "0"}, {Name: "clinical_7", Value: "0"},
			{Name: "drug_8", Value: "0"}, {Name: "covered_8", Value: "0", Text: "false"}, {Name: "formulary_tier_8", Value: "0", Text: "0"}, {Name: "clinical_8", Value: "0"},
			{Name: "drug_9", Value: "0"}, {Name: "covered_9", Value: "0", Text: "false"}, {Name: "formulary_tier_9", Value: "0", Text: "0"}, {Name: "clinical_9", Value: "0"},
			{Name: "drug_10", Value: "0"}, {Name: "covered_10", Value: "0", Text: "false"}, {Name: "formulary_tier_10", Value: "0", Text: "0"}, {Name: "clinical_10", Value: "0"},
			{Name: "medication_1", Value: "211278772281", Text: "11289"}, {Name: "medication_2", Value: "0"}, {Name: "medication_3", Value: "0"}, {Name: "medication_4", Value: "0"},
			{Name: "medication_5", Value: "0"}, {Name: "medication_6", Value: "0"}, {Name: "medication_7", Value: "0"}, {Name: "medication_8", Value: "0"},
			{Name: "medication_9", Value: "0"}, {Name: "medication_10", Value: "0"}, {Name: "medication_11", Value: "0"}, {Name: "medication_12", Value: "0"},
			{Name: "triggers", Value: "1", Text: "allergy:penicillin"},
			{Name: "allergy_drug_1", Value: "0"}, {Name: "allergy_drug_2", Value: "0"}, {Name: "allergy_drug_3", Value: "0"}, {Name: "allergy_drug_4", Value: "0"},
			{Name: "unidentified", Value: "0"},
			{Name: "salt", Value: "14814072231016246713439985380011902565723236918843535609512278494462279236356"},
		},
	},
}

// ExampleDecision is the document's example v1 eligibility decision: a real
// one, with its proof and statement.
func ExampleDecision() healthagents.V1EligibilityResult {
	return healthagents.V1EligibilityResult{Eligible: true, CoveragePercentage: 80, RequiresAuthorization: true, DeductibleMet: true, CopayAmount: 25,
		VerificationProof: &exampleProof, Statement: &exampleStatement, Issuer: "self"}
}

// exampleTime is the examples' clock: 2026-11-21 10:00 UTC.
var exampleTime = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// exampleHex is n bytes of hex derived from label: stable, real-looking
// digests, keys and ciphertexts for the examples.
func exampleHex(label string, n int) string {
	var out []byte
	for i := 0; len(out) < n; i++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", label, i)))
		out = append(out, sum[:]...)
	}
	return hex.EncodeToString(out[:n])
}

// bodyExamples are an example of every request and response body type the
// routes and webhooks document; buildDocument gives each to its component
// schema (openapi.Document.Example), and the objects they hold give theirs.
// TestOpenAPIExamples fails on a schema left without one.
func bodyExamples() []any {
	available := "2026-11-23"
	expires := exampleTime.AddDate(1, 0, 0)
	oldExpires := exampleTime.Add(24 * time.Hour)
	sessionOrgs := []string{"org_st_mary", "org_mercy_general", "org_lakeside"}
	// A real validation: PT-000123 takes warfarin; apixaban and ibuprofen
	// are prescribed together.
	rx := healthagents.V1PrescriptionRequest{
		PatientID: "PT-000123", ProviderNPI: "1234567893", PharmacyNPI: "1003000126",
		Indication: "atrial fibrillation; knee pain",
		Medications: []healthagents.V1Medication{
			{NDCCode: "00003-0894-21", Name: "apixaban", Strength: "5 mg", Quantity: 60, DaysSupply: 30, Refills: 2},
			{NDCCode: "00904-5853-61", Name: "ibuprofen", Strength: "400 mg", Quantity: 30, DaysSupply: 10},
		},
	}
	rxResult := healthagents.V1PrescriptionResult{
		ValidationStatus: "rejected",
		PrescriptionID:   "rx_qjav3v5zjnjngrqxsqek4tgo",
		Codes:            []string{"INTERACTION_FOUND"},
		Checks: healthagents.V1Checks{
			DrugInteractions: healthagents.V1DrugInteractions{Status: "blocked", InteractionsFound: 2, Warnings: []healthagents.V1Warning{{
				Type: "interaction", NDCCode: "00003089421", Drug: "apixaban", With: "ibuprofen", WithSource: "new", Severity: "moderate",
				Mechanism:  "NSAIDs and aspirin add platelet inhibition and gastric injury to the anticoagulant effect of apixaban or rivaroxaban.",
				Management: "Avoid routine use; if needed, short courses with gastroprotection and bleeding monitoring.",
			}, {
				Type: "interaction", NDCCode: "00904585361", Drug: "ibuprofen", With: "warfarin", WithSource: "current", Severity: "major",
				Mechanism:  "NSAIDs impair platelet function and injure the gastric mucosa, and some displace warfarin from albumin; together with anticoagulation the risk of serious gastrointestinal and other bleeding rises several-fold.",
				Management: "Avoid; prefer acetaminophen for pain. If an NSAID is essential, use the lowest dose for the shortest time, add gastroprotection and check INR and signs of bleeding.",
			}}},
			Eligibility:          healthagents.V1EligibilityCheck{Status: "eligible", Coverage: 100},
			PharmacyConfirmation: healthagents.V1PharmacyConfirmation{Status: "unconfirmed", CrossChainVerified: true},
		},
		ZKProof:   &exampleProof,
		ZKProofs:  []healthagents.V1Proof{exampleProof},
		CreatedAt: exampleTime,
	}
	endpoint := webhook.Endpoint{
		ID: "ep_3j2k5m7n9p1q3r5s", URL: "https://hooks.example.com/healthagents",
		Events: []string{"eligibility.verified", "prescription.validated"}, CreatedAt: exampleTime, Status: "active",
	}
	attempt := webhook.Attempt{
		ID: "att_7q2w4e6r8t0y1u3i", MessageID: "msg_2b4d6f8h0j2l4n6p", EndpointID: endpoint.ID, Event: "eligibility.verified",
		Number: 1, At: exampleTime, StatusCode: 200, LatencyMS: 84, Result: "delivered", Response: `{"ok":true}`,
	}
	keyInfo := api.KeyInfo{
		KeyID: "0RY72MVR3Q", Env: "live", Name: "claims-gateway", Tier: "pro",
		Scopes: []string{"eligibility", "prescription", "patients", "webhooks"}, Organization: "org_st_mary",
		AllowedIPs: []string{"203.0.113.0/24"}, CreatedAt: exampleTime, ExpiresAt: &expires, Active: true,
	}
	issuer := api.Issuer{
		IssuerID:  exampleHex("issuer-pub", 32),
		Name:      "Aetna Better Health",
		PublicKey: exampleHex("issuer-pub", 32),
		KeyHash:   "13876354519617934120598374710564826319547308791264537104852964538712930451877",
		Admin:     "0x8626f6940E2eb28930eFb4CeF49B2d1F2C9C1199",
		Status:    "active", CreatedAt: exampleTime,
		TxHash: "0x" + exampleHex("issuer-tx", 32),
		OwnerAction: &api.UnsignedTransaction{
			Summary: "registerIssuer(13876354519617934120598374710564826319547308791264537104852964538712930451877, 0x8626f6940E2eb28930eFb4CeF49B2d1F2C9C1199)",
			ChainID: "1337", From: "0x556d716a08D9A50d4049e5A2ce56C15c6B6941dC", To: "0x1DFCa9333B961a7d76EB1C8c59c7016B5926558E",
			Nonce: 4, Gas: 96000, Data: "0x2a1a8b3c" + exampleHex("register-call", 68), RLP: "0x02f8b1" + exampleHex("unsigned-rlp", 176),
		},
	}
	roster := []api.AdvertisedKeys{}
	for _, org := range sessionOrgs {
		roster = append(roster, api.AdvertisedKeys{OrganizationID: org, CipherPublicKey: exampleHex(org+"/cipher", 32), MaskPublicKey: exampleHex(org+"/mask", 32)})
	}
	share := api.SealedShare{From: "org_mercy_general", To: "org_st_mary", Ciphertext: exampleHex("sealed-share", 140)}
	auditEntry := api.AuditEntry{
		Seq: 1042, Time: exampleTime, Actor: "key", KeyID: "0RY72MVR3Q", Organization: "org_st_mary", ClientIP: "203.0.113.17",
		Action: "v1.eligibility.verify", PatientRef: exampleHex("patient-ref", 32), Outcome: "success", Status: 200,
		RequestID: "01JD8K6Q4W9T2M5X7B3NXYZ0AB", PrevHash: exampleHex("audit-1041", 32), Hash: exampleHex("audit-1042", 32),
	}
	org := federated.Organization{
		OrganizationID: "org_st_mary", OrganizationName: "St. Mary's Hospital", Endpoint: "https://fl.stmary.example.org",
		EncryptionKey: ExampleOrganizationKey, CreatedAt: exampleTime, UpdatedAt: exampleTime,
	}
	weights := "48414657" + "01000000" + "0a000000" + exampleHex("weights", 80)
	taskFeature := api.TaskFeature{Name: "radius_mean", Column: "radius_mean", Scaling: "given", Mean: 14.1273, Scale: 3.52095}
	taskLabel := api.TaskLabel{Column: "diagnosis", Positive: "M", Negative: "B"}
	taskModel := api.TaskModel{Type: "logistic_regression", L2: 0.001}
	taskDef := api.TaskDefinition{ID: "wdbc/v1", Features: []api.TaskFeature{taskFeature}, Label: taskLabel, Model: taskModel,
		LearningRate: 0.5, LocalEpochs: 5, HeldOut: 0.2, ReferenceDate: "2026-01-01", ClampZ: 5}
	eps, rounds := 3.0, 20
	exampleRunSettings := api.FederatedRunSettings{Epsilon: &eps, Rounds: &rounds}
	taskPrivacy := api.FederatedPrivacy{Enabled: true, Epsilon: 8, Delta: 1e-5, EpsilonSpent: 2.1, EpsilonRemaining: 5.9, RoundsReleased: 3}
	exampleTask := api.FederatedTask{ID: "wdbc/v1", TaskHash: exampleHex("task-wdbc/v1", 32), Definition: &taskDef, MaxRounds: 20, CurrentRound: 3,
		Phase: "share_keys", ClipNorm: 1, MinParticipants: 3, TargetParticipants: 3, RoundTimeoutSeconds: 1800, Privacy: taskPrivacy, OrganizationID: "hospital-a",
		Default: true, Source: "config"}
	return []any{
		// Root family.
		healthagents.Health{Status: "healthy", Version: healthagents.Version, Message: "All agents operational", Checked: []string{"database", "chain"}},
		healthagents.SystemStatus{
			Status:            "operational",
			Agents:            healthagents.AgentsStatus{Eligibility: "active", Prescription: "active", DiagnosisModel: "trained"},
			FederatedLearning: healthagents.FederatedStatus{CurrentRound: 3, Participants: 2},
			Blockchain: healthagents.ChainStatus{Endpoint: "embedded", Network: "simulated",
				Registry: "0x2Dd6B9263C0acF6518b20d0e10100F18049273a5", ChainID: "1337", Anchor: "each"},
			Issuer: "self", SelfIssuerKeyHash: "20798638768457414661854865514315291338517721271540350325324351324378071794036", ZKSetup: "development",
		},
		healthagents.EligibilityRequest{PatientData: new(ExampleEnvelope()), ProcedureCode: "70551"},
		healthagents.EligibilityResult{Eligible: true, CoveragePct: 80, PrivacyPreserved: true, ProcedureCode: "70551", RequiresAuthorization: true, ZKProofVerified: true,
			DecisionRecord: healthagents.DecisionRecord{BlockchainTx: exampleProof.BlockchainTx, Statement: &exampleStatement, Issuer: "self"}},
		// Leaf 2 of the three-leaf batch worked through in docs/statement.md
		// ("Batches"; verify/testdata/batch-example.json).
		healthagents.StatementBatch{Root: "9924046234267733772289774587914658898445420848411366568720959424979856478256", Size: 3, LeafIndex: 2,
			Path: []string{"0", "13739134494904299508000979405774700092260324847178810411582878210722217983669"}},
		healthagents.PrescriptionRequest{PatientData: new(ExampleEnvelope()), DrugCode: "6809"},
		healthagents.PrescriptionResult{Valid: true, DrugCode: "6809", InteractionsChecked: true, ZKProofVerified: true,
			CrossChainOracle: "unconfirmed: no pharmacy availability attestation is published for this drug",
			DecisionRecord:   healthagents.DecisionRecord{BlockchainTx: "0xc66d716adacf5f81bbc02ad52653cc56bd412ac195f167b3c14ab0d6df0b1bee", Statement: &exampleRxStatement, Issuer: "self"}},
		FederatedUpdateRequest{PatientDataList: []*healthagents.PatientData{new(ExampleEnvelope())}, RoundNumber: 3},
		api.FederatedUpdateResult{Round: 3, Participants: 2, ModelHash: exampleHex("model-1.0.3", 32), ModelVersion: "1.0.3", Phase: "advertise_keys", Records: 1},
		ErrorBody{Detail: "Validation error: field 'procedure_code' is required"},
		api.Liveness{Status: "alive"},
		api.Readiness{Status: "ready", Checks: map[string]string{"database": "ok", "chain": "ok"}},

		// Keys.
		api.CreateKeyRequest{Name: "claims-gateway", Env: "live", Tier: "pro", Scopes: []string{"eligibility", "prescription", "patients", "webhooks"},
			Organization: "org_st_mary", AllowedIPs: []string{"203.0.113.0/24"}, ExpiresAt: &expires},
		api.KeyCreated{APIKey: "sk_live_0RY72MVR3Q_P9s5Iq0AqOj9FcSL8hgvriJDYaDIytqN3YWiEh", CreatedAt: exampleTime, KeyID: "0RY72MVR3Q", Env: "live", Tier: "pro",
			Scopes: []string{"eligibility", "prescription", "patients", "webhooks"}, Organization: "org_st_mary", ExpiresAt: &expires,
			Replaces: "7nFviijHSu", OldKeyExpiresAt: &oldExpires, OldKeyValidHours: 24},
		api.KeyList{Keys: []api.KeyInfo{keyInfo}, Total: 1, Offset: 0, Limit: 20},
		api.KeyRevoked{KeyID: "0RY72MVR3Q", Revoked: true, RevokedAt: exampleTime},
		api.KeyUsage{KeyID: "0RY72MVR3Q", WindowSeconds: 3600, From: exampleTime.Add(-time.Hour), To: exampleTime, Requests: 1284, Errors: 17,
			LatencyMS: api.Latencies{P50: 38.2, P95: 121.5, P99: 240.9}, ErrorRate: 0.0132},
		api.WhitelistRequest{IPs: []string{"203.0.113.0/24", "198.51.100.7"}},
		api.Whitelist{KeyID: "0RY72MVR3Q", IPs: []string{"203.0.113.0/24", "198.51.100.7"}},

		// v1.
		ExampleEnvelope(),
		PatientRegistered{PatientID: "PT-000123", Stored: true},
		PatientDeleted{PatientID: "PT-000123", Deleted: true},
		healthagents.V1EligibilityRequest{PatientID: "PT-000123", MemberID: "W123456789", ProcedureCode: "70551", ProviderNPI: "1234567893"},
		ExampleDecision(),
		rx,
		rxResult,
		api.BatchValidateRequest{Prescriptions: []healthagents.V1PrescriptionRequest{rx}},
		api.BatchValidateResult{Results: []api.BatchValidateEntry{{Index: 0, Status: 200, Result: &rxResult}}, Succeeded: 1},
		healthagents.V1Attestation{PharmacyNPI: "1003000126", NDCCode: "00003-0894-21", EstimatedAvailability: available},
		healthagents.V1AttestationResult{PharmacyNPI: "1003000126", NDCCode: "00003089421", EstimatedAvailability: available,
			BlockchainTx: "0x" + exampleHex("attestation-tx", 32), BlockNumber: 42},
		api.AuditList{Entries: []api.AuditEntry{auditEntry}, Total: 1042, Offset: 1041, Limit: 1},
		api.AuditVerification{Valid: true, Entries: 1042, HeadHash: auditEntry.Hash},
		api.IssuerRequest{PublicKey: issuer.PublicKey, Name: issuer.Name, Admin: issuer.Admin},
		issuer,
		api.IssuerList{Issuers: []api.Issuer{issuer}, Total: 1},
		api.RevocationRequest{Nonce: 16284785698725355310, AdminSignature: "0x" + exampleHex("admin-revocation-signature", 64) + "1b"},
		api.Revocation{IssuerID: issuer.IssuerID, KeyHash: issuer.KeyHash, Nonce: 16284785698725355310, Status: "revoked",
			RevokedInBlock: 1187, TxHash: "0x" + exampleHex("revocation-tx", 32)},

		// Federated.
		api.OrganizationRequest{OrganizationName: org.OrganizationName, Endpoint: org.Endpoint, EncryptionKey: org.EncryptionKey},
		org,
		api.FederatedRound{
			Round: 3, Phase: "masked_input", TaskHash: exampleHex("task", 32), ModelVersion: "1.0.3", ModelHash: exampleHex("model-1.0.3", 32),
			Weights: weights, Session: exampleHex("session-3", 32), Dim: 12, ClipNorm: 1, FracBits: 16, MaxParticipants: 16, MaxEvalRecords: 1000,
			Threshold: 2, PhaseDeadline: exampleTime.Add(10 * time.Minute), Deadline: exampleTime.Add(time.Hour), Participants: 3,
			Roster: roster, SharedKeys: sessionOrgs, Inbox: []api.SealedShare{share}, Survivors: sessionOrgs[:2],
		},
		api.KeysSubmission{CipherPublicKey: roster[0].CipherPublicKey, MaskPublicKey: roster[0].MaskPublicKey},
		api.SharesSubmission{Commitment: exampleHex("self-mask-commitment", 32), Shares: []api.SealedShare{
			{From: "org_st_mary", To: "org_mercy_general", Ciphertext: exampleHex("share-1", 140)},
			{From: "org_st_mary", To: "org_lakeside", Ciphertext: exampleHex("share-2", 140)}}},
		api.GradientSubmission{OrganizationID: "org_st_mary", Round: 3, GradientsEncrypted: "4841534d" + "01000000" + "0c000000" + exampleHex("masked", 96),
			ModelVersion: "1.0.3", SampleCount: 412},
		api.RevealsSubmission{Reveals: []api.RevealedShare{{Of: "org_lakeside", Kind: "mask_key", Share: "0002" + exampleHex("reveal", 66)}}},
		api.FederatedAccepted{Accepted: true, Round: 3, CurrentRound: 3, Phase: "masked_input", Participants: 3},
		exampleGlobalModel(),
		api.RoundEnd{Round: 2, Outcome: "abandoned", Reason: "2 organizations advertised keys, 3 needed"},
		api.ModelFeature{Name: "radius_mean", Column: "radius_mean", Mean: 14.1022, Scale: 3.4988, Range: []float64{0, 50}},
		taskFeature, taskLabel, taskModel, taskDef, taskPrivacy,
		api.LearnedScaling{Name: "radius_mean", Mean: 14.1022, Scale: 3.4988, Count: 463},
		api.ProofKeys{Shape: "w31-e5-p2-b25", ProvingKey: "AAEC...", VerifyingKey: "AwQF..."},
		exampleTask,
		api.FederatedTaskList{Tasks: []api.FederatedTask{exampleTask}, Total: 1},
		exampleRunSettings,
		api.FederatedTaskRequest{Task: taskDef, Settings: &exampleRunSettings},

		// Webhooks.
		webhook.CreateRequest{URL: endpoint.URL, Events: endpoint.Events},
		webhook.Created{WebhookEndpoint: endpoint, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo="},
		WebhookList{Webhooks: []webhook.Endpoint{endpoint}, Total: 1, Offset: 0, Limit: 20},
		WebhookAttempts{Attempts: []webhook.Attempt{attempt}, Total: 1, Offset: 0, Limit: 20},
		WebhookDeleted{ID: endpoint.ID, Deleted: true},
		webhook.EligibilityVerifiedPayload{Event: "eligibility.verified", Timestamp: exampleTime, Data: webhook.EligibilityVerifiedData{
			PatientID: exampleHex("owner-pseudonym", 32), CoveragePercentage: 80, RequiresAuth: true, Eligible: true, ZKProofVerified: true}},
		webhook.PrescriptionPayload{Event: "prescription.validated", Timestamp: exampleTime, Data: webhook.PrescriptionData{
			PatientID: exampleHex("owner-pseudonym", 32), Valid: true, ZKProofVerified: true, PrescriptionID: rxResult.PrescriptionID, ValidationStatus: "approved"}},
	}
}

// exampleGlobalModel is the built-in diagnosis task's model at version
// 1.0.3: its weights encoded and as numbers agree.
func exampleGlobalModel() api.GlobalModel {
	task := federated.DefaultTask()
	values := []float64{1.8412, 0.9127, 0.4408, 0.3861, -0.2179}
	enc, _ := federated.EncodeWeights(values) // five finite weights always encode
	hash, _ := federated.ModelHash(values)
	accuracy, meanAcc, sdAcc := 0.87, 0.86, 0.03
	return api.GlobalModel{ModelVersion: "1.0.3", ModelHash: hash, Weights: hex.EncodeToString(enc), Accuracy: &accuracy,
		AccuracyModelVersion: "1.0.2", EvalSamples: 600, EvalParticipants: 3, MeanAccuracy: &meanAcc, AccuracyStdDev: &sdAcc,
		OrganizationsContributed: 3, TrainingRound: 2, CurrentRound: 3, EpsilonSpent: 1.5,
		ModelType: task.Model.Type, WeightValues: values, Features: modelFeatures(task, nil, nil), ClampZ: task.ClampZ, Classes: task.ONNXClasses()}
}

package server_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// The endpoint fuzz targets drive the real handler of one route with
// arbitrary bodies and check the contract of every answer: no panic (a
// recovered panic is a 500, refused below), a status the OpenAPI document
// lists for that operation, every error a JSON {"detail"} with a non-empty
// detail, and no 500 at all: arbitrary input is the client's fault.
//
// The server is the real one on a SQLite file with real keys, patient
// registry, webhook registry and federated coordinator. Two things are
// swapped to keep each execution cheap and offline: the service has no
// Attestor (valid seeds would otherwise pay a Groth16 proof and a mined
// transaction per execution; proofs have their own fuzz targets in zkp and
// chain), and webhook hosts resolve through fuzzResolver instead of DNS.

// fuzzResolver resolves every host without the network: names under
// .internal to a private address (refused), the rest to a public one.
type fuzzResolver struct{}

func (fuzzResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".internal") {
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

// fuzzTarget is the server under fuzz and what seeds need to be valid.
type fuzzTarget struct {
	h      http.Handler
	key    string // every scope, organization fuzzOrg, registered
	keyID  string
	kr     *cipher.Keyring
	status map[string]map[int]bool // "METHOD /path" → documented statuses
}

const fuzzOrg = "fuzz-hospital"

func newFuzzTarget(f *testing.F) *fuzzTarget {
	f.Helper()
	ctx := context.Background()
	db := storetest.Open(f, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(f)})
	ks, err := store.NewKeyStore(db)
	if err != nil {
		f.Fatal(err)
	}
	keys, err := apikey.New(ks)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { keys.Close(context.Background()) })
	raw, k, err := keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: fuzzOrg, Scopes: []apikey.Scope{
		apikey.ScopeEligibility, apikey.ScopePrescription, apikey.ScopeFederated, apikey.ScopeWebhooks,
		apikey.ScopePatients, apikey.ScopeKeysAdmin, apikey.ScopePharmacy,
	}})
	if err != nil {
		f.Fatal(err)
	}
	fk, err := cipher.GenerateKey()
	if err != nil {
		f.Fatal(err)
	}
	kr, err := cipher.ParseKeyring(fk)
	if err != nil {
		f.Fatal(err)
	}
	ws, err := store.NewWebhookStore(db)
	if err != nil {
		f.Fatal(err)
	}
	reg, err := webhook.NewRegistry(ws, webhook.WithTenants(), webhook.WithResolver(fuzzResolver{}))
	if err != nil {
		f.Fatal(err)
	}
	// No Attestor: see the comment at the top of the file.
	svc, err := healthagents.New(kr, healthagents.WithEvents(reg))
	if err != nil {
		f.Fatal(err)
	}
	ps, err := store.NewPatientStore(db)
	if err != nil {
		f.Fatal(err)
	}
	rs, err := store.NewPrescriptionStore(db)
	if err != nil {
		f.Fatal(err)
	}
	v1, err := healthagents.NewV1(svc, ps, rs)
	if err != nil {
		f.Fatal(err)
	}
	fed, err := app.OpenFederated(ctx, db, federated.Config{DisablePrivacy: true, RoundTimeout: time.Hour}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { fed.Close() })
	h, err := server.New(server.Deps{Service: svc, Keys: keys, V1: v1, Webhooks: reg, FederatedAPI: fed.API, Federated: fed.API})
	if err != nil {
		f.Fatal(err)
	}
	ft := &fuzzTarget{h: h, key: raw, keyID: k.ID, kr: kr, status: map[string]map[int]bool{}}

	// The documented statuses come from the served OpenAPI document.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		f.Fatalf("openapi.json: %v", err)
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			set := map[int]bool{}
			for code := range op.Responses {
				if n, err := strconv.Atoi(code); err == nil {
					set[n] = true
				}
			}
			ft.status[strings.ToUpper(method)+" "+path] = set
		}
	}

	// The caller's organization is registered, so the round-protocol
	// bodies are decoded rather than refused at the door.
	body := fmt.Sprintf(`{"organization_name":"Fuzz Hospital","endpoint":"https://fuzz.example.org/fl","encryption_key":%q}`, hex.EncodeToString(bytes.Repeat([]byte{9}, 32)))
	if st, b := ft.do(http.MethodPost, "/api/v1/federated/organizations", []byte(body)); st != http.StatusOK && st != http.StatusCreated {
		f.Fatalf("registering the organization: %d %s", st, b)
	}
	return ft
}

// do serves one request with the target's key.
func (ft *fuzzTarget) do(method, path string, body []byte) (int, []byte) {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+ft.key)
	rec := httptest.NewRecorder()
	ft.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// seal returns a valid PatientData envelope as JSON.
func (ft *fuzzTarget) seal(f *testing.F, patientID string) string {
	f.Helper()
	r := &record.Record{PatientID: patientID, Coverage: &record.Coverage{
		PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789", Status: "active",
		Start: "2026-01-01", End: "2099-12-31", Deductible: 1500, DeductibleMet: 200, Copay: 25,
	}, Diagnosis: "positive", Observations: map[string]float64{"glucose": 148, "bmi": 33.6}}
	plain, err := r.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	env, err := cipher.Seal(patientID, plain, ft.kr)
	if err != nil {
		f.Fatal(err)
	}
	b, err := json.Marshal(env)
	if err != nil {
		f.Fatal(err)
	}
	return string(b)
}

// fuzzBodies is the shared part of every endpoint target: the first seed
// must get status want (so the seeds cannot rot into refusals unnoticed),
// then arbitrary bodies go to method path (documented as pattern).
func (ft *fuzzTarget) fuzzBodies(f *testing.F, method, path, pattern string, want int, seeds ...string) {
	f.Helper()
	documented := ft.status[method+" "+pattern]
	if len(documented) == 0 {
		f.Fatalf("%s %s is not in the OpenAPI document", method, pattern)
	}
	if status, out := ft.do(method, path, []byte(seeds[0])); status != want {
		f.Fatalf("the first seed got %d, want %d: %s", status, want, out)
	}
	for _, s := range append(seeds, commonSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, out := ft.do(method, path, body)
		if !documented[status] {
			t.Fatalf("status %d is not documented for %s %s (body %s)", status, method, pattern, out)
		}
		if status == http.StatusInternalServerError {
			t.Fatalf("500 for client input: %s", out)
		}
		if status >= 400 {
			var e map[string]any
			if err := json.Unmarshal(out, &e); err != nil {
				t.Fatalf("%d body is not JSON: %q", status, out)
			}
			if d, _ := e["detail"].(string); d == "" || len(e) != 1 {
				t.Fatalf("%d body is not {detail}: %s", status, out)
			}
		}
	})
}

// commonSeeds are the malformed shapes every body decoder must refuse.
var commonSeeds = []string{
	``, `{`, `[]`, `null`, `"str"`, `7`, `{} {}`, `{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"\ud800":"\u0000"}`,
}

func FuzzPutPatientBody(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.fuzzBodies(f, "PUT", "/api/v1/patients/PT-FUZZ-1", "/api/v1/patients/{patient_id}", http.StatusOK,
		ft.seal(f, "PT-FUZZ-1"), ft.seal(f, "PT-OTHER"),
		`{"patient_id":"PT-FUZZ-1","encrypted_data":"!!","ipfs_cid":"Qm","data_hash":"00"}`)
}

func FuzzV1EligibilityBody(f *testing.F) {
	ft := newFuzzTarget(f)
	if st, b := ft.do("PUT", "/api/v1/patients/PT-FUZZ-1", []byte(ft.seal(f, "PT-FUZZ-1"))); st != http.StatusOK {
		f.Fatalf("registering the patient: %d %s", st, b)
	}
	ft.fuzzBodies(f, "POST", "/api/v1/eligibility/verify", "/api/v1/eligibility/verify", http.StatusOK,
		`{"patient_id":"PT-FUZZ-1","member_id":"W123456789","procedure_code":"PROC002","provider_npi":"1234567893"}`,
		`{"patient_id":"PT-FUZZ-1","member_id":"W000","procedure_code":"PROC002","provider_npi":"1234567893"}`,
		`{"patient_id":"PT-NONE","member_id":"W123456789","procedure_code":"PROC999","provider_npi":"1234567890"}`,
		`{"patient_id":7,"member_id":null}`)
}

// v1Prescription is a valid v1 prescription request body.
const v1PrescriptionSeed = `{"patient_id":"PT-FUZZ-1","provider_npi":"1234567893","pharmacy_npi":"1245319599","indication":"x",` +
	`"medications":[{"ndc_code":"0071-0155-23","name":"atorvastatin","strength":"20 mg","quantity":30,"days_supply":30,"refills":3}]}`

func FuzzV1PrescriptionBody(f *testing.F) {
	ft := newFuzzTarget(f)
	if st, b := ft.do("PUT", "/api/v1/patients/PT-FUZZ-1", []byte(ft.seal(f, "PT-FUZZ-1"))); st != http.StatusOK {
		f.Fatalf("registering the patient: %d %s", st, b)
	}
	ft.fuzzBodies(f, "POST", "/api/v1/prescriptions/validate", "/api/v1/prescriptions/validate", http.StatusOK,
		v1PrescriptionSeed,
		`{"patient_id":"PT-FUZZ-1","provider_npi":"1234567893","medications":[{"ndc_code":"1","quantity":-1,"days_supply":999,"refills":99}]}`,
		`{"patient_id":"PT-FUZZ-1","provider_npi":"1234567893","medications":[]}`)
}

func FuzzV1BatchValidateBody(f *testing.F) {
	ft := newFuzzTarget(f)
	if st, b := ft.do("PUT", "/api/v1/patients/PT-FUZZ-1", []byte(ft.seal(f, "PT-FUZZ-1"))); st != http.StatusOK {
		f.Fatalf("registering the patient: %d %s", st, b)
	}
	ft.fuzzBodies(f, "POST", "/api/v1/prescriptions/batch-validate", "/api/v1/prescriptions/batch-validate", http.StatusOK,
		`{"prescriptions":[`+v1PrescriptionSeed+`,{"patient_id":"PT-NONE","provider_npi":"1","medications":[]}]}`,
		`{"prescriptions":[]}`, `{"prescriptions":[null]}`)
}

func FuzzPharmacyAttestationBody(f *testing.F) {
	ft := newFuzzTarget(f)
	// No pharmacy oracle is wired (it writes to a chain): a valid body
	// passes validation and gets the documented 503 PHARMACY_ERROR.
	ft.fuzzBodies(f, "POST", "/api/v1/pharmacy/attestations", "/api/v1/pharmacy/attestations", http.StatusServiceUnavailable,
		`{"pharmacy_npi":"1245319599","ndc_code":"0071-0155-23","estimated_availability":"2026-11-24"}`,
		`{"pharmacy_npi":"1245319590","ndc_code":"x","estimated_availability":"tomorrow"}`)
}

func FuzzWebhookRegistrationBody(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.fuzzBodies(f, "POST", "/webhooks", "/webhooks", http.StatusCreated,
		`{"url":"https://hooks.example.org/h","events":["eligibility.verified","prescription.validated"]}`,
		`{"url":"https://db.internal/h","events":["eligibility.verified"]}`,
		`{"url":"http://169.254.169.254/latest","events":["eligibility.verified"]}`,
		`{"url":"https://hooks.example.org/h","events":["nope"]}`, `{"url":"ftp://x","events":[]}`)
}

func FuzzCreateKeyBody(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.fuzzBodies(f, "POST", "/auth/keys", "/auth/keys", http.StatusOK,
		`{"name":"ci","env":"dev","scopes":["eligibility"],"allowed_ips":["10.0.0.0/8"]}`,
		`{"tier":"pro","rate_limit":50,"daily_quota":-1}`,
		`{"env":"prod","tier":"gold","scopes":["root"],"allowed_ips":["300.1.1.1"],"expires_at":"yesterday"}`,
		`{"expires_at":"2000-01-01T00:00:00Z","rate_limit":-5}`)
}

func FuzzKeyWhitelistBody(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.fuzzBodies(f, "POST", "/api/keys/"+ft.keyID+"/whitelist", "/api/keys/{key_id}/whitelist", http.StatusOK,
		`{"ips":[]}`, `{"ips":["not-an-ip","::1/129"]}`)
}

func FuzzSubmitFederatedUpdateBody(f *testing.F) {
	ft := newFuzzTarget(f)
	env := ft.seal(f, "PT-FUZZ-1")
	ft.fuzzBodies(f, "POST", "/submit-federated-update", "/submit-federated-update", http.StatusOK,
		`{"patient_data_list":[`+env+`],"round_number":0}`,
		`{"patient_data_list":[`+env+`,null],"round_number":0}`,
		`{"patient_data_list":[],"round_number":-1}`,
		`{"patient_data_list":[{"patient_id":"x","encrypted_data":"!!","ipfs_cid":"Qm","data_hash":"00"}],"round_number":0}`)
}

func FuzzRegisterOrganizationBody(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.fuzzBodies(f, "POST", "/api/v1/federated/organizations", "/api/v1/federated/organizations", http.StatusOK,
		fmt.Sprintf(`{"organization_name":"Fuzz Hospital","endpoint":"https://fuzz.example.org/fl","encryption_key":%q}`, hex.EncodeToString(bytes.Repeat([]byte{7}, 32))),
		`{"organization_name":"","endpoint":"javascript:x","encryption_key":"zz"}`)
}

func FuzzGradientSubmissionBody(f *testing.F) {
	ft := newFuzzTarget(f)
	masked := hex.EncodeToString(append([]byte("HASM\x01\x02\x00\x00\x00"), make([]byte, 16)...))
	ft.fuzzBodies(f, "POST", "/api/v1/federated/gradients", "/api/v1/federated/gradients", http.StatusConflict,
		`{"organization_id":"`+fuzzOrg+`","round":0,"gradients_encrypted":"`+masked+`","model_version":"1.0.0","sample_count":10}`,
		`{"organization_id":"`+fuzzOrg+`","round":0,"gradients_encrypted":"zz","model_version":"1.0.0","sample_count":-1}`,
		`{"organization_id":"other","round":99,"gradients_encrypted":"","model_version":"","sample_count":0}`)
}

func FuzzRoundKeysBody(f *testing.F) {
	ft := newFuzzTarget(f)
	k1, k2 := hex.EncodeToString(bytes.Repeat([]byte{5}, 32)), hex.EncodeToString(bytes.Repeat([]byte{6}, 32))
	ft.fuzzBodies(f, "POST", "/api/v1/federated/rounds/0/keys", "/api/v1/federated/rounds/{round}/keys", http.StatusAccepted,
		`{"cipher_public_key":"`+k1+`","mask_public_key":"`+k2+`"}`, `{"cipher_public_key":"`+k1+`","mask_public_key":"`+k1+`"}`, `{"cipher_public_key":"00","mask_public_key":"zz"}`)
}

func FuzzRoundSharesBody(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.fuzzBodies(f, "POST", "/api/v1/federated/rounds/0/shares", "/api/v1/federated/rounds/{round}/shares", http.StatusConflict,
		`{"commitment":"`+strings.Repeat("ab", 32)+`","shares":[{"from":"`+fuzzOrg+`","to":"hospital-b","ciphertext":"00ff"}]}`,
		`{"commitment":"x","shares":[null]}`)
}

func FuzzRoundRevealsBody(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.fuzzBodies(f, "POST", "/api/v1/federated/rounds/0/reveals", "/api/v1/federated/rounds/{round}/reveals", http.StatusConflict,
		`{"reveals":[{"of":"hospital-b","kind":"self_mask","share":"0001`+strings.Repeat("00", 66)+`"}]}`,
		`{"reveals":[{"of":"","kind":"other","share":"zz"}]}`)
}

func FuzzVerifyEligibilityBody(f *testing.F) {
	ft := newFuzzTarget(f)
	env := ft.seal(f, "PT-FUZZ-1")
	ft.fuzzBodies(f, "POST", "/verify-eligibility", "/verify-eligibility", http.StatusOK,
		`{"patient_data":`+env+`,"procedure_code":"PROC002"}`, `{"patient_data":`+env+`,"procedure_code":"PROC999"}`)
}

func FuzzValidatePrescriptionBody(f *testing.F) {
	ft := newFuzzTarget(f)
	env := ft.seal(f, "PT-FUZZ-1")
	ft.fuzzBodies(f, "POST", "/validate-prescription", "/validate-prescription", http.StatusOK,
		`{"patient_data":`+env+`,"drug_code":"6809"}`, `{"patient_data":`+env+`,"drug_code":"nope"}`)
}

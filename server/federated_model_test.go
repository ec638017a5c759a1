package server_test

import (
	"crypto/ecdh"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/onnx/onnxtest"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store/storetest"
)

// The model answer carries what it takes to use the weights elsewhere
// (the weights as numbers, the features' scaling, the classes), and
// ?format=onnx gives the model as ONNX: run by onnxruntime over raw values
// (some missing, some far out of range) it predicts what the service's
// model predicts. An unknown format is 400.
func TestFederatedModelExportOverHTTP(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	s := newFedServer(t, db, testFedConfig(), nil, nil, nil)
	orgs := []string{"hospital-a", "hospital-b", "hospital-c"}
	s.register(t, orgs...)
	ps := hospitals(t, orgs, 200)
	s.runRound(t, "", ps)
	s.runRound(t, "", ps)

	hc := s.client(t, "hospital-a")
	m, err := hc.FederatedModel(t.Context())
	require.NoError(t, err)
	require.Equal(t, "1.0.2", m.ModelVersion)
	w, err := client.DecodeWeights(m)
	require.NoError(t, err)
	assert.Equal(t, w, m.WeightValues, "the numbers are the encoded weights")
	task := federated.DefaultTask()
	assert.Equal(t, "logistic_regression", m.ModelType)
	assert.Equal(t, []string{"negative", "positive"}, m.Classes)
	assert.Equal(t, task.ClampZ, m.ClampZ)
	require.Len(t, m.Features, len(task.Features))
	for i, f := range task.Features {
		assert.Equal(t, client.ModelFeature{Name: f.Name, Mean: f.Mean, Scale: f.Scale}, m.Features[i])
	}

	b, err := hc.FederatedModelONNX(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, b)

	// Raw rows: drawn around the features' means, a few missing or far out.
	rng := rand.New(rand.NewPCG(5, 5))
	var rows [][]float64
	var recs []*record.Record
	for i := range 200 {
		row := make([]float64, len(m.Features))
		rec := &record.Record{PatientID: fmt.Sprint(i), Diagnosis: "positive", Observations: map[string]float64{}}
		for j, f := range m.Features {
			row[j] = f.Mean + 2*f.Scale*rng.NormFloat64()
			switch {
			case i%17 == j:
				row[j] = math.NaN()
			case i%23 == j:
				row[j] = f.Mean + 40*f.Scale
			}
			if !math.IsNaN(row[j]) {
				rec.Observations[f.Name] = row[j]
			}
		}
		rows, recs = append(rows, row), append(recs, rec)
	}
	got := onnxtest.Run(t, b, rows)
	d, _, err := task.Examples(recs)
	require.NoError(t, err)
	mdl, err := task.NewModel()
	require.NoError(t, err)
	for i, x := range d.X {
		p := mdl.Predict(m.WeightValues, x)
		require.InDeltaSlice(t, []float64{1 - p, p}, got.Probabilities[i], 1e-12, "row %d", i)
		assert.Equal(t, p >= 0.5, got.Class[i] == 1, "row %d", i)
	}

	res := s.ks.call(t, "GET", "/api/v1/federated/model?format=pmml", s.keys["hospital-a"], nil)
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Equal(t, "Validation error: format must be json or onnx", res.detail())
}

// TestExampleOrganizationKey: the registration example's key is the public
// half of RFC 7748's published private key (section 6.1), and the example
// body registers.
func TestExampleOrganizationKey(t *testing.T) {
	t.Parallel()
	priv, err := hex.DecodeString("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
	require.NoError(t, err)
	k, err := ecdh.X25519().NewPrivateKey(priv)
	require.NoError(t, err)
	assert.Equal(t, server.ExampleOrganizationKey, hex.EncodeToString(k.PublicKey().Bytes()))
	_, err = federated.NewOrganization("org_st_mary", "St. Mary's Hospital", "", server.ExampleOrganizationKey)
	require.NoError(t, err, "the endpoint is optional")
}

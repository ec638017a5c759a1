package federated

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/record"
)

// loadWDBC reads the public Breast Cancer Wisconsin (Diagnostic) data set
// and its task file from testdata/wdbc (see the README there).
func loadWDBC(t testing.TB) (*TaskFile, []*record.Record) {
	t.Helper()
	f, err := os.Open("../testdata/wdbc/task.json")
	require.NoError(t, err)
	defer f.Close()
	tf, err := ParseTaskFile(f)
	require.NoError(t, err)
	d, err := os.Open("../testdata/wdbc/wdbc.csv")
	require.NoError(t, err)
	defer d.Close()
	recs, err := tf.ReadCSV(d)
	require.NoError(t, err)
	require.Len(t, recs, 569)
	return tf, recs
}

// splitWDBC deals the records to n hospitals. IID: a seeded shuffle dealt
// round robin. Non-IID: sorted by the mean radius of the nucleus and cut in
// n contiguous blocks, so the hospitals see different tumour sizes and very
// different shares of malignant cases (about 2 %, 20 % and 90 % for three).
func splitWDBC(recs []*record.Record, n int, iid bool, seed uint64) [][]*record.Record {
	recs = slices.Clone(recs)
	out := make([][]*record.Record, n)
	if iid {
		rand.New(rand.NewPCG(seed, seed^0x5eed)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		for i, r := range recs {
			out[i%n] = append(out[i%n], r)
		}
		return out
	}
	slices.SortStableFunc(recs, func(a, b *record.Record) int {
		return cmp.Compare(a.Observations["radius_mean"], b.Observations["radius_mean"])
	})
	for i, r := range recs {
		out[i*n/len(recs)] = append(out[i*n/len(recs)], r)
	}
	return out
}

func wdbcParticipants(t testing.TB, tf *TaskFile, cohorts [][]*record.Record) []*Participant {
	t.Helper()
	var ps []*Participant
	for i, c := range cohorts {
		p, err := NewParticipant(ParticipantConfig{Org: fmt.Sprintf("hospital-%c", 'a'+i), Task: tf.Task(), HeldOut: tf.HeldOut}, c)
		require.NoError(t, err)
		ps = append(ps, p)
	}
	return ps
}

// wdbcRounds is the length of a run in these tests and the table.
const wdbcRounds = 10

// wdbcRun trains rounds of the full protocol (secure aggregation, DP as
// budget says: nil is DP off) and returns the held-out accuracy of the final
// model on the union of the hospitals' held-out records.
func wdbcRun(t testing.TB, tf *TaskFile, ps []*Participant, budget *dp.Budget) float64 {
	t.Helper()
	return wdbcRunNoise(t, tf, ps, budget, false)
}

// wdbcRunNoise is wdbcRun with the noise added by the participants
// (distributed DP) when distributed is set.
func wdbcRunNoise(t testing.TB, tf *TaskFile, ps []*Participant, budget *dp.Budget, distributed bool) float64 {
	t.Helper()
	cfg := noDPConfig(newFakeClock(), len(ps))
	cfg.Task, cfg.MaxRounds = tf.Task(), wdbcRounds
	if budget != nil {
		cfg.DisablePrivacy = false
		cfg.Privacy = &PrivacyConfig{Budget: *budget, Distributed: distributed}
	}
	w := federatedRun(t, t.Context(), cfg, ps, wdbcRounds)
	_, test := pooled(ps)
	return heldOutAccuracy(t, tf.Task(), w, test)
}

// Without DP, three hospitals holding thirds of a real clinical data set
// (WDBC) reach the held-out accuracy of centralized training on the pooled
// records within 0.02, for an IID and a non-IID split.
func TestWDBCFederatedMatchesCentralized(t *testing.T) {
	t.Parallel()
	tf, recs := loadWDBC(t)
	for _, iid := range []bool{true, false} {
		ps := wdbcParticipants(t, tf, splitWDBC(recs, 3, iid, 1))
		train, test := pooled(ps)
		wc := centralized(t, t.Context(), tf.Task(), train, wdbcRounds*tf.LocalEpochs)
		accC := heldOutAccuracy(t, tf.Task(), wc, test)
		accF := wdbcRun(t, tf, ps, nil)
		t.Logf("iid=%v: held-out accuracy centralized %.4f, federated %.4f (n=%d)", iid, accC, accF, test.Len())
		require.Greater(t, accC, 0.9, "the task is learnable")
		require.InDelta(t, accC, accF, 0.02)
	}
}

// TestAccuracyTable measures held-out accuracy against the privacy budget
// on WDBC for docs/federated-privacy.md (section 3). Run:
//
//	FEDERATED_ACCURACY_TABLE=1 go test ./federated -run TestAccuracyTable -v
func TestAccuracyTable(t *testing.T) {
	if os.Getenv("FEDERATED_ACCURACY_TABLE") == "" {
		t.Skip("set FEDERATED_ACCURACY_TABLE=1 to measure (a few minutes)")
	}
	tf, recs := loadWDBC(t)
	const seeds = 20
	type row struct {
		name   string
		budget *dp.Budget
	}
	rows := []row{{"DP off", nil}}
	for _, eps := range []float64{8, 3, 1} {
		rows = append(rows, row{fmt.Sprintf("ε = %g", eps), &dp.Budget{Epsilon: eps, Delta: 1e-5}})
	}
	def := dp.DefaultBudget()
	rows = append(rows, row{fmt.Sprintf("ε = %g (default)", def.Epsilon), &def})
	var out strings.Builder
	fmt.Fprintf(&out, "| budget (whole run) | noise multiplier z | IID, 3 hospitals | non-IID (by tumour radius), 3 hospitals |\n|---|---|---|---|\n")
	// The centralized baseline on the same records, for the caption.
	for _, iid := range []bool{true, false} {
		ps := wdbcParticipants(t, tf, splitWDBC(recs, 3, iid, 1))
		train, test := pooled(ps)
		wc := centralized(t, t.Context(), tf.Task(), train, wdbcRounds*tf.LocalEpochs)
		t.Logf("centralized, iid=%v: %.3f on %d held-out records", iid, heldOutAccuracy(t, tf.Task(), wc, test), test.Len())
	}
	for _, r := range rows {
		z := "none"
		if r.budget != nil {
			m, err := dp.CalibrateNoise(*r.budget, wdbcRounds, dp.DefaultOrders())
			require.NoError(t, err)
			z = fmt.Sprintf("%.2f", m)
		}
		cells := []string{}
		for _, iid := range []bool{true, false} {
			var accs []float64
			for s := range uint64(seeds) {
				ps := wdbcParticipants(t, tf, splitWDBC(recs, 3, iid, s+1))
				accs = append(accs, wdbcRun(t, tf, ps, r.budget))
			}
			mean, sd := meanSD(accs)
			lo, hi := slices.Min(accs), slices.Max(accs)
			cells = append(cells, fmt.Sprintf("%.3f ± %.3f (%.3f–%.3f)", mean, sd, lo, hi))
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s |\n", r.name, z, cells[0], cells[1])
	}
	t.Logf("WDBC, %d rounds, %d seeds each, clip norm 1, delta 1e-5:\n%s", wdbcRounds, seeds, out.String())
}

// TestAccuracyTableDistributed compares, on WDBC, the noise added by the
// coordinator with the noise added by the participants (distributed DP:
// a discrete Gaussian share each, before masking) at the same budget, for
// docs/federated-privacy.md. Run:
//
//	FEDERATED_ACCURACY_TABLE=1 go test ./federated -run TestAccuracyTableDistributed -v
func TestAccuracyTableDistributed(t *testing.T) {
	if os.Getenv("FEDERATED_ACCURACY_TABLE") == "" {
		t.Skip("set FEDERATED_ACCURACY_TABLE=1 to measure")
	}
	tf, recs := loadWDBC(t)
	const seeds = 20
	var out strings.Builder
	fmt.Fprintf(&out, "| budget (whole run) | z | central, IID | distributed, IID | central, non-IID | distributed, non-IID |\n|---|---|---|---|---|---|\n")
	for _, eps := range []float64{8, 3, 1, 0.1} {
		b := dp.Budget{Epsilon: eps, Delta: 1e-5}
		z, err := dp.CalibrateNoise(b, wdbcRounds, dp.DefaultOrders())
		require.NoError(t, err)
		var cells []string
		for _, iid := range []bool{true, false} {
			for _, distributed := range []bool{false, true} {
				var accs []float64
				for s := range uint64(seeds) {
					ps := wdbcParticipants(t, tf, splitWDBC(recs, 3, iid, s+1))
					accs = append(accs, wdbcRunNoise(t, tf, ps, &b, distributed))
				}
				mean, sd := meanSD(accs)
				cells = append(cells, fmt.Sprintf("%.3f ± %.3f", mean, sd))
			}
		}
		fmt.Fprintf(&out, "| ε = %g | %.2f | %s | %s | %s | %s |\n", eps, z, cells[0], cells[1], cells[2], cells[3])
	}
	t.Logf("WDBC, %d rounds, %d seeds each, clip norm 1, delta 1e-5, 3 hospitals (minimum 3):\n%s", wdbcRounds, seeds, out.String())
}

package app_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
)

// TestNothingIdentifyingAtRest runs the service through the calls that
// store something about a patient — a v1 registration, a v1 eligibility
// check, a v1 prescription validation (proven and recorded), the same
// through the root family, reads back by id — then opens the SQLite file
// with a plain SQL driver, as someone holding only the file would, and
// reads every cell of every table: none holds the patient id, the member
// id, the birth date, a drug's code or name, or the service day.
func TestNothingIdentifyingAtRest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := keyedDir(t)
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: dir}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			a.Close()
		}
	}()
	<-a.ZK.Warm()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "at-rest"})
	require.NoError(t, err)
	c, err := client.New(ts.URL, client.WithAPIKey(key), client.WithMaxAttempts(1))
	require.NoError(t, err)

	env := sealed(t, a, func(r *record.Record) {
		r.Medications = nil
		r.Name = &record.Name{Family: "Doeling", Given: "Janet"} // for the X12 member index
	})
	require.NoError(t, c.PutPatient(ctx, env))
	// An X12 270 finds the patient through the member index (keyed
	// hashes only, checked below with every other cell).
	today := time.Now().UTC()
	x12in := fmt.Sprintf("ISA*00*          *00*          *ZZ*CLEARINGHOUSE  *ZZ*HEALTHAGENTS   *%s*0900*^*00501*000000001*0*T*:~"+
		"GS*HS*CLEARINGHOUSE*HEALTHAGENTS*%s*0900*1*X*005010X279A1~ST*270*0001*005010X279A1~BHT*0022*13*R1*%s*0900~"+
		"HL*1**20*1~NM1*PR*2*PAYER*****PI*60054~HL*2*1*21*1~NM1*1P*2*CLINIC*****XX*1234567893~"+
		"HL*3*2*22*0~NM1*IL*1*DOELING*JANET****MI*W123456789~DMG*D8*19680402~EQ*4~SE*11*0001~GE*1*1~IEA*1*000000001~",
		today.Format("060102"), today.Format("20060102"), today.Format("20060102"))
	x12out, err := c.EligibilityX12(ctx, []byte(x12in))
	require.NoError(t, err)
	require.Contains(t, string(x12out), "EB*1*IND*30", "%s", x12out)
	el, err := c.VerifyEligibilityV1(ctx, healthagents.V1EligibilityRequest{PatientID: env.PatientID, MemberID: "W123456789",
		ProcedureCode: "PROC001", ProviderNPI: "1234567893"})
	require.NoError(t, err)
	require.NotNil(t, el.VerificationProof)
	rx, err := c.ValidatePrescriptionV1(ctx, healthagents.V1PrescriptionRequest{PatientID: env.PatientID, ProviderNPI: "1234567893",
		Medications: []healthagents.V1Medication{{NDCCode: "00071015523", Name: "atorvastatin", Quantity: 30, DaysSupply: 30}}})
	require.NoError(t, err)
	require.NotNil(t, rx.ZKProof, "proven, so its public inputs were there to leak")
	again, err := c.Prescription(ctx, rx.PrescriptionID)
	require.NoError(t, err)
	assert.Equal(t, rx.PrescriptionID, again.PrescriptionID, "read back whole through the service")
	_, err = c.VerifyEligibility(ctx, env, "PROC001")
	require.NoError(t, err)
	day := time.Now().UTC()
	// The database and its WAL files are the service user's alone.
	for _, f := range []string{"healthagents.db", "healthagents.db-wal", "healthagents.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if errors.Is(err, os.ErrNotExist) && f != "healthagents.db" {
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}
	require.NoError(t, a.Close())
	closed = true

	needles := []string{"PT-000123", "W123456789", "1968-04-02", "19680402", "00071015523", "83367", "atorvastatin", "PROC001", "Doeling", "DOELING", "Janet", "JANET"}
	days := []string{day.Format(time.DateOnly), day.Format("20060102")}
	db, err := sql.Open("sqlite", filepath.Join(dir, "healthagents.db"))
	require.NoError(t, err)
	defer db.Close()
	tables := func() []string {
		rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			out = append(out, n)
		}
		require.NoError(t, rows.Err())
		return out
	}()
	require.Contains(t, tables, "v1_prescriptions")
	cells := 0
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			for i, v := range vals {
				cells++
				where := table + "." + cols[i]
				needles := needles
				if !strings.HasPrefix(table, "federated_") {
					// The federated coordinator's rounds carry their own
					// phase deadlines (dates of the service, of no patient);
					// everywhere else no cell holds the day either.
					needles = append(slices.Clip(needles), days...)
				}
				switch v := v.(type) {
				case int64: // times in microseconds, counts: only an exact match could be a code
					for _, n := range needles {
						assert.NotEqual(t, n, fmt.Sprint(v), where)
					}
				case string:
					checkCell(t, where, v, needles)
				case []byte:
					checkCell(t, where, string(v), needles)
				}
			}
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	assert.Greater(t, cells, 50)
}

func checkCell(t *testing.T, where, v string, needles []string) {
	t.Helper()
	for _, n := range needles {
		if strings.Contains(v, n) {
			t.Errorf("%s holds %q", where, n)
		}
	}
}

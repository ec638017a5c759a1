package app_test

import (
	"encoding/hex"
	"io"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/record"
)

// TestChainLogsCarryNothingClinical: after a full run (an eligibility check
// and a prescription validation, proven and recorded), a third party
// reading every log on the chain through the read-only JSON-RPC finds none
// of the codes, days or ids the requests used — in any of the forms they
// take as public inputs (their bytes, a 32-byte word of them, a day number).
//
// The -v2 circuits' public inputs are [issuer key hash, digest, circuit id]
// only; TestDetectorFindsClearInputs shows the detector would find the
// values had they been put on chain in clear.
func TestChainLogsCarryNothingClinical(t *testing.T) {
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t), ChainRPCListen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	ctx := t.Context()
	<-a.ZK.Warm() // the fast prover's tables: a loaded machine must not time the first proofs out
	res, err := a.Service.VerifyEligibility(ctx, sealed(t, a, nil), "PROC001")
	require.NoError(t, err)
	require.True(t, res.ZKProofVerified)
	// The record's medication (warfarin), allergy and condition are in the
	// prescription's statement: the opening the caller gets names them.
	rx, err := a.Service.ValidatePrescription(ctx, sealed(t, a, func(r *record.Record) { r.Conditions = append(r.Conditions, "I50.9") }), "6809")
	require.NoError(t, err)
	require.NotNil(t, rx)
	require.NotNil(t, rx.Proof)
	opened := map[string]string{}
	for _, f := range rx.Proof.Statement.Opening.Fields {
		opened[f.Name] = f.Text
	}
	require.Equal(t, "11289", opened["medication_1"])
	require.Equal(t, "allergy:penicillin condition:I50", opened["triggers"])

	day := time.Now().UTC()
	needles := clinicalNeedles(day, "PROC001", "6809", "PT-000123", "W123456789", "60054", "PPO-GOLD", "1968-04-02",
		"11289", "warfarin", "penicillin", "E11.9", "E119", "I50.9", "I509")
	client, err := ethclient.DialContext(ctx, "http://"+a.ChainRPCAddr)
	require.NoError(t, err)
	defer client.Close()
	logs, err := client.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0)})
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	var found []string
	for _, lg := range logs {
		var b strings.Builder
		for _, topic := range lg.Topics {
			b.WriteString(hex.EncodeToString(topic.Bytes()))
		}
		b.WriteString(hex.EncodeToString(lg.Data))
		text := b.String()
		for what, needle := range needles {
			if strings.Contains(text, needle) {
				found = append(found, what+" in a log of "+lg.Address.Hex())
			}
		}
	}
	require.Empty(t, found)
}

// clinicalNeedles are the hex forms (lower case, no 0x) in which the values
// could appear in a log: their UTF-8 bytes anywhere, and the service day as
// a day number in a 32-byte word and as its date's bytes.
func clinicalNeedles(day time.Time, values ...string) map[string]string {
	out := map[string]string{}
	for _, v := range values {
		out[v] = hex.EncodeToString([]byte(v))
	}
	date := day.Format(time.DateOnly)
	out["service date"] = hex.EncodeToString([]byte(date))
	days := big.NewInt(time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400)
	out["service day number"] = hex.EncodeToString(common.BigToHash(days).Bytes())
	return out
}

// TestDetectorFindsClearInputs: the needles of TestChainLogsCarryNothingClinical
// do match a log holding a code and a day number as 32-byte words (as the
// first circuits' StatementVerified events did), so an empty result means
// something.
func TestDetectorFindsClearInputs(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	needles := clinicalNeedles(day, "PROC001")
	var word [32]byte
	copy(word[32-len("PROC001"):], "PROC001")
	text := hex.EncodeToString(word[:])
	var dayWord [32]byte
	new(big.Int).SetInt64(day.Unix() / 86400).FillBytes(dayWord[:])
	text += hex.EncodeToString(dayWord[:])
	hits := 0
	for _, n := range needles {
		if strings.Contains(text, n) {
			hits++
		}
	}
	require.GreaterOrEqual(t, hits, 2, "code and day found")
}

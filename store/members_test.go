package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestMemberIndex: keys find the owner's patient while the envelope they
// were read from is the registered one; another owner, a replaced or a
// deleted envelope find nothing; nothing of the keys is stored in clear.
func TestMemberIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		ps, err := store.NewPatientStore(db, store.WithKeySealer(testKeyring(t)))
		require.NoError(t, err)
		name := healthagents.MemberKey{Kind: healthagents.MemberKeyName, Text: "v1\x1f60054\x1fW123456789\x1fDOE\x1fJANE"}
		birth := healthagents.MemberKey{Kind: healthagents.MemberKeyBirth, Text: "v1\x1f60054\x1fW123456789\x1f1968-04-02"}
		other := healthagents.MemberKey{Kind: healthagents.MemberKeyBirth, Text: "v1\x1f60054\x1fW123456789\x1f1970-01-01"}

		env := healthagents.PatientData{PatientID: "PT-M1", EncryptedData: "gAAAA-one", IPFSCID: "bafy-one", DataHash: "aa"}
		require.NoError(t, ps.PutPatient(ctx, "org:a", env))
		require.NoError(t, ps.IndexMember(ctx, "org:a", "PT-M1", "aa", []healthagents.MemberKey{name, birth}))

		got, err := ps.FindMembers(ctx, "org:a", []healthagents.MemberKey{birth, other})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "PT-M1", got[0].PatientID)
		assert.Equal(t, []string{healthagents.MemberKeyBirth}, got[0].Matched)
		assert.ElementsMatch(t, []string{healthagents.MemberKeyBirth, healthagents.MemberKeyName}, got[0].Indexed)

		got, err = ps.FindMembers(ctx, "org:b", []healthagents.MemberKey{name, birth})
		require.NoError(t, err)
		assert.Empty(t, got, "another owner's keys find nothing")
		got, err = ps.FindMembers(ctx, "org:a", []healthagents.MemberKey{other})
		require.NoError(t, err)
		assert.Empty(t, got)

		// Nothing identifying in any cell of the index.
		rows, err := db.SQL().QueryContext(ctx, `SELECT owner, lookup, kind, patient_ref, data_hash, patient FROM v1_member_keys`)
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			var cells [6]string
			require.NoError(t, rows.Scan(&cells[0], &cells[1], &cells[2], &cells[3], &cells[4], &cells[5]))
			for _, c := range cells {
				for _, secret := range []string{"W123456789", "DOE", "JANE", "1968-04-02", "PT-M1"} {
					assert.NotContains(t, c, secret)
				}
				// A hex digest holds any short run of digits by chance
				// (a 4-digit run in 64 hex characters about once in a
				// thousand), so the bare numbers are looked for only in
				// cells that are not hex.
				if !isHex(c) {
					for _, secret := range []string{"1968", "60054"} {
						assert.NotContains(t, c, secret)
					}
				}
			}
			assert.True(t, strings.HasPrefix(cells[5], "sealed:"), "the patient id is sealed")
			n++
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		assert.Equal(t, 2, n)

		// A replaced envelope: the old keys no longer find the patient
		// until it is indexed again.
		env.DataHash = "bb"
		require.NoError(t, ps.PutPatient(ctx, "org:a", env))
		got, err = ps.FindMembers(ctx, "org:a", []healthagents.MemberKey{name, birth})
		require.NoError(t, err)
		assert.Empty(t, got, "keys of a replaced envelope")
		require.NoError(t, ps.IndexMember(ctx, "org:a", "PT-M1", "bb", []healthagents.MemberKey{name}))
		got, err = ps.FindMembers(ctx, "org:a", []healthagents.MemberKey{name, birth})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, []string{healthagents.MemberKeyName}, got[0].Indexed, "re-indexing replaced the keys")

		// Deleting the patient deletes its keys.
		require.NoError(t, ps.DeletePatient(ctx, "org:a", "PT-M1"))
		got, err = ps.FindMembers(ctx, "org:a", []healthagents.MemberKey{name})
		require.NoError(t, err)
		assert.Empty(t, got)
		var left int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM v1_member_keys`).Scan(&left))
		assert.Zero(t, left)
	})
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return s != ""
}

// TestX12Controls: the counter hands out distinct numbers to concurrent
// callers and goes round after 999999999.
func TestX12Controls(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		c, err := store.NewX12Controls(db)
		require.NoError(t, err)
		first, err := c.NextX12Control(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, first)
		var mu sync.Mutex
		seen := map[int]bool{first: true}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 5 {
					n, err := c.NextX12Control(ctx)
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					assert.False(t, seen[n], "control number %d handed out twice", n)
					seen[n] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		assert.Len(t, seen, 41)
		_, err = db.SQL().ExecContext(ctx, `UPDATE x12_controls SET value = 999999999`)
		require.NoError(t, err)
		n, err := c.NextX12Control(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "after 999999999 comes 1")
	})
}

// BenchmarkFindMembers is the member index lookup of one 270 subscriber
// (two keys) among 1000 registered patients, SQLite.
//
//	go test ./store -run '^$' -bench FindMembers -benchtime 2000x
func BenchmarkFindMembers(b *testing.B) {
	db := storetest.Open(b, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(b)})
	ctx := b.Context()
	ps, err := store.NewPatientStore(db, store.WithKeySealer(testKeyring(b)))
	require.NoError(b, err)
	keysOf := func(i int) []healthagents.MemberKey {
		return []healthagents.MemberKey{
			{Kind: healthagents.MemberKeyName, Text: fmt.Sprintf("v1\x1f60054\x1fW%09d\x1fDOE\x1fJANE", i)},
			{Kind: healthagents.MemberKeyBirth, Text: fmt.Sprintf("v1\x1f60054\x1fW%09d\x1f1968-04-02", i)},
		}
	}
	for i := range 1000 {
		id := fmt.Sprintf("PT-%d", i)
		require.NoError(b, ps.PutPatient(ctx, "org:bench", healthagents.PatientData{PatientID: id, EncryptedData: "x", IPFSCID: "y", DataHash: "h"}))
		require.NoError(b, ps.IndexMember(ctx, "org:bench", id, "h", keysOf(i)))
	}
	want := keysOf(500)
	for b.Loop() {
		got, err := ps.FindMembers(ctx, "org:bench", want)
		if err != nil || len(got) != 1 || got[0].PatientID != "PT-500" {
			b.Fatalf("%v %+v", err, got)
		}
	}
}

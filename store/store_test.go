package store_test

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func TestOpenMigratesOnceAndReopens(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		require.NoError(t, db.Ping(ctx))
		vs, err := db.AppliedMigrations(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, vs)
		assert.Equal(t, 1, vs[0])

		// A restart applies nothing new and keeps the rows.
		_, err = db.SQL().ExecContext(ctx, db.Rebind(`INSERT INTO api_keys (id, env, hash, tier, created_at) VALUES (?, ?, ?, ?, ?)`),
			"abcdefghij", "live", "00", "free", 1)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		db2 := storetest.Open(t, b)
		vs2, err := db2.AppliedMigrations(ctx)
		require.NoError(t, err)
		assert.Equal(t, vs, vs2)
		var n int
		require.NoError(t, db2.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM api_keys`).Scan(&n))
		assert.Equal(t, 1, n)
	})
}

func TestConcurrentOpenMigratesSafely(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ms := []store.Migration{
				{Version: 1, Name: "0001_a.sql", SQL: "CREATE TABLE a (id INTEGER PRIMARY KEY);\nINSERT INTO a (id) VALUES (1);"},
				{Version: 2, Name: "0002_b.sql", SQL: "CREATE TABLE b (id INTEGER PRIMARY KEY);"},
			}
			const replicas = 4
			var wg sync.WaitGroup
			errs := make([]error, replicas)
			dbs := make([]*store.DB, replicas)
			for i := range replicas {
				wg.Go(func() {
					dbs[i], errs[i] = store.Open(context.Background(), b.DSN, store.WithMigrations(ms))
				})
			}
			wg.Wait()
			for i := range replicas {
				require.NoError(t, errs[i], "replica %d", i)
				t.Cleanup(func() { dbs[i].Close() })
			}
			var n int
			require.NoError(t, dbs[0].SQL().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM a`).Scan(&n))
			assert.Equal(t, 1, n, "migration 1 ran exactly once")
			vs, err := dbs[0].AppliedMigrations(t.Context())
			require.NoError(t, err)
			assert.Equal(t, []int{1, 2}, vs)
		})
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ms := []store.Migration{
				{Version: 1, Name: "0001_ok.sql", SQL: "CREATE TABLE ok (id INTEGER PRIMARY KEY);"},
				{Version: 2, Name: "0002_bad.sql", SQL: "CREATE TABLE bad (id INTEGER PRIMARY KEY);\nTHIS IS NOT SQL;"},
			}
			_, err := store.Open(t.Context(), b.DSN, store.WithMigrations(ms))
			require.ErrorContains(t, err, "0002_bad.sql")
			db := storetest.Open(t, b, store.WithMigrations(ms[:1]))
			vs, err := db.AppliedMigrations(t.Context())
			require.NoError(t, err)
			assert.Equal(t, []int{1}, vs, "the failed run left nothing behind")
			_, err = db.SQL().ExecContext(t.Context(), `SELECT 1 FROM bad`)
			assert.Error(t, err)
		})
	}
}

func TestParseMigrations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []int
		wantErr string
	}{
		{"ok/sorted", fstest.MapFS{
			"0002_b.sql": {Data: []byte("SELECT 1;")}, "0001_a.sql": {Data: []byte("SELECT 1;")}, "README.md": {},
		}, []int{1, 2}, ""},
		{"ok/per-dialect pair", fstest.MapFS{
			"0001_x.sqlite.sql": {Data: []byte("SELECT 1;")}, "0001_x.postgres.sql": {Data: []byte("SELECT 1;")},
		}, []int{1, 1}, ""},
		{"fail/duplicate version", fstest.MapFS{
			"0001_a.sql": {Data: []byte("SELECT 1;")}, "0001_b.sql": {Data: []byte("SELECT 1;")},
		}, nil, "share version 1"},
		{"fail/portable and dialect clash", fstest.MapFS{
			"0003_a.sql": {Data: []byte("SELECT 1;")}, "0003_a.postgres.sql": {Data: []byte("SELECT 1;")},
		}, nil, "share version 3"},
		{"fail/bad name", fstest.MapFS{"keys.sql": {Data: []byte("SELECT 1;")}}, nil, "must start with a positive number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ms, err := store.ParseMigrations(tt.files)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRebind(t *testing.T) {
	t.Parallel()
	pg, err := store.Open(t.Context(), storetest.SQLiteDSN(t))
	require.NoError(t, err)
	defer pg.Close()
	assert.Equal(t, "SELECT ? FROM t", pg.Rebind("SELECT ? FROM t"), "SQLite keeps ?")
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"a = '?' AND b = ?", "a = '?' AND b = $1"},
		{`"we?ird" = ? -- why?` + "\n AND c = ?", `"we?ird" = $1 -- why?` + "\n AND c = $2"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, store.RebindDollar(tt.in), tt.in)
	}
}

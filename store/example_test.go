package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/healthagents/healthagents/store"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)
	// A file path opens SQLite; "postgres://…" would open PostgreSQL.
	db, err := store.Open(ctx, filepath.Join(dir, store.DefaultFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	var n int
	_ = db.SQL().QueryRowContext(ctx, db.Rebind(`SELECT COUNT(*) FROM api_keys WHERE tier = ?`), "pro").Scan(&n)
	fmt.Println(db.Dialect(), n)
	// Output: sqlite 0
}

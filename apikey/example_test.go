package apikey_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/store"
)

func ExampleParse() {
	_, err := apikey.Parse("sk_live_0123456789_abcdefghijklmnopqrstuvwxyzABCDEF000000")
	fmt.Println(errors.Is(err, apikey.ErrInvalid))
	// Output: true
}

func ExampleService_Authenticate() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "apikey-example")
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, filepath.Join(dir, "keys.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	ks, _ := store.NewKeyStore(db)
	svc, _ := apikey.New(ks)
	defer svc.Close(ctx)

	raw, _, _ := svc.Create(ctx, apikey.CreateParams{Tier: apikey.Pro})
	k, err := svc.Authenticate(ctx, raw, netip.MustParseAddr("192.0.2.1"))
	fmt.Println(k.Tier, err)
	// Output: pro <nil>
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/store"
)

// errKeysUsage explains the keys command.
var errKeysUsage = errors.New(`usage: healthagents keys create [-env live|dev] [-tier free|pro|enterprise] [-scopes s1,s2] [-admin]
                                [-org NAME] [-name LABEL] [-allow IP,CIDR] [-rate-limit N] [-daily-quota N] [-json]
       healthagents keys list [-offset N] [-limit N] [-org NAME] [-json]
       healthagents keys revoke KEY_ID`)

// runKeys runs `healthagents keys create|list|revoke` offline, against the
// database the server uses (it needs no running server). A key created here
// is printed once; a revocation reaches running servers within their key
// cache TTL (5 s).
func runKeys(ctx context.Context, cfg app.Config, args []string, stdout io.Writer) (err error) {
	if len(args) == 0 {
		return errKeysUsage
	}
	sub, args := args[0], args[1:]
	if sub == "help" || sub == "-h" || sub == "--help" {
		_, err := fmt.Fprintln(stdout, errKeysUsage.Error())
		return err
	}
	db, err := app.OpenStore(ctx, cfg) // the server's database: DATABASE_URL or DATA_DIR
	if err != nil {
		return err
	}
	defer db.Close()
	ks, err := store.NewKeyStore(db)
	if err != nil {
		return err
	}
	svc, err := apikey.New(ks)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := svc.Close(context.WithoutCancel(ctx)); err == nil {
			err = cerr
		}
	}()
	switch sub {
	case "create":
		return keysCreate(ctx, svc, cfg, args, stdout)
	case "list":
		return keysList(ctx, svc, args, stdout)
	case "revoke":
		return keysRevoke(ctx, svc, args, stdout)
	}
	return fmt.Errorf("unknown keys command %q\n%w", sub, errKeysUsage)
}

func keysFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("keys "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func keysCreate(ctx context.Context, svc *apikey.Service, cfg app.Config, args []string, stdout io.Writer) error {
	fs := keysFlags("create")
	defaultEnv := string(apikey.Dev)
	if cfg.Production {
		defaultEnv = string(apikey.Live)
	}
	env := fs.String("env", defaultEnv, "live or dev")
	tier := fs.String("tier", string(apikey.Free), "free, pro or enterprise")
	scopes := fs.String("scopes", "", "comma-separated scopes (default: every service scope)")
	admin := fs.Bool("admin", false, "add the keys:admin scope")
	org := fs.String("org", "", "organization")
	name := fs.String("name", "", "label")
	allow := fs.String("allow", "", "comma-separated addresses or CIDR ranges")
	rateLimit := fs.Int("rate-limit", 0, "requests per minute replacing the tier figures")
	dailyQuota := fs.Int("daily-quota", 0, "v1 eligibility verifications per day (negative: unlimited)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return fmt.Errorf("keys create: bad arguments\n%w", errKeysUsage)
	}
	p := apikey.CreateParams{
		Env: apikey.Env(*env), Tier: apikey.Tier(*tier), Organization: *org, Name: *name,
		RateLimit: *rateLimit, DailyQuota: *dailyQuota, CreatedBy: apikey.ByCLI,
	}
	if p.Env == apikey.Dev && cfg.Production {
		return errors.New("keys create: sk_dev_ keys are refused by a production server (HEALTHAGENTS_ENV=production)")
	}
	if *scopes != "" {
		p.Scopes = []apikey.Scope{}
		for _, s := range splitList(*scopes) {
			sc, err := apikey.ParseScope(s)
			if err != nil {
				return err
			}
			p.Scopes = append(p.Scopes, sc)
		}
	}
	if *admin {
		if p.Scopes == nil {
			p.Scopes = apikey.DefaultScopes()
		}
		p.Scopes = append(p.Scopes, apikey.ScopeKeysAdmin)
	}
	if *allow != "" {
		ips, err := apikey.ParseAllowList(splitList(*allow))
		if err != nil {
			return err
		}
		p.AllowedIPs = ips
	}
	raw, k, err := svc.Create(ctx, p)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{
			"api_key": raw, "key_id": k.ID, "created_at": k.CreatedAt, "env": k.Env, "tier": k.Tier,
			"scopes": k.Scopes, "organization": k.Organization,
		})
	}
	_, err = fmt.Fprintln(stdout, raw)
	return err
}

func keysList(ctx context.Context, svc *apikey.Service, args []string, stdout io.Writer) error {
	fs := keysFlags("list")
	offset := fs.Int("offset", 0, "keys to skip")
	limit := fs.Int("limit", apikey.MaxPageSize, "keys to show (at most 100)")
	org := fs.String("org", "", "only this organization")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return fmt.Errorf("keys list: bad arguments\n%w", errKeysUsage)
	}
	keys, total, err := svc.List(ctx, apikey.ListOptions{Organization: *org, Offset: *offset, Limit: *limit})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"keys": keys, "total": total, "offset": *offset, "limit": *limit})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY_ID\tENV\tTIER\tORGANIZATION\tSCOPES\tCREATED\tSTATE")
	now := time.Now()
	for _, k := range keys {
		state := "active"
		switch {
		case !k.RevokedAt.IsZero():
			state = "revoked"
		case !k.Active(now):
			state = "expired"
		case !k.ExpiresAt.IsZero():
			state = "expires " + k.ExpiresAt.Format(time.RFC3339)
		}
		scopes := make([]string, len(k.Scopes))
		for i, s := range k.Scopes {
			scopes[i] = string(s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Env, k.Tier, dash(k.Organization),
			strings.Join(scopes, ","), k.CreatedAt.Format(time.RFC3339), state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if *offset+len(keys) < total {
		_, err = fmt.Fprintf(stdout, "(%d of %d; next: -offset %d)\n", len(keys), total, *offset+len(keys))
	}
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func keysRevoke(ctx context.Context, svc *apikey.Service, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("keys revoke: give one KEY_ID\n%w", errKeysUsage)
	}
	id := args[0]
	if tok, err := apikey.Parse(id); err == nil {
		id = tok.ID // a whole key string names its key too
	}
	if err := svc.Revoke(ctx, id); err != nil {
		if errors.Is(err, apikey.ErrNotFound) {
			return fmt.Errorf("keys revoke: no key %q", id)
		}
		return err
	}
	_, err := fmt.Fprintf(stdout, "revoked %s\n", id)
	return err
}

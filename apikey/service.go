package apikey

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// Defaults of the Service options.
const (
	DefaultRotationGrace = 24 * time.Hour
	DefaultCacheTTL      = 5 * time.Second
	DefaultFlushInterval = time.Second
	// MaxUsageWindow bounds the window Usage accepts.
	MaxUsageWindow = 90 * 24 * time.Hour
	// MaxPageSize bounds List's limit.
	MaxPageSize = 100
)

type options struct {
	now           func() time.Time
	grace         time.Duration
	cacheTTL      time.Duration
	cacheMax      int
	flushInterval time.Duration
	usageMax      int
	retention     time.Duration
	logger        *slog.Logger
	adminToken    string
}

// Option configures a Service.
type Option func(*options) error

// WithClock injects the clock (tests drive rotation grace with it).
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return errors.New("apikey: nil clock")
		}
		o.now = now
		return nil
	}
}

// WithRotationGrace sets how long a rotated key keeps working (default 24 h).
func WithRotationGrace(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return errors.New("apikey: negative rotation grace")
		}
		o.grace = d
		return nil
	}
}

// WithCacheTTL sets how long an authenticated key is served from memory
// (default 5 s; 0 disables the cache). A key revoked or rotated through
// another Service instance (another replica, or the CLI) keeps working here
// for at most this long; through this instance, at once.
func WithCacheTTL(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return errors.New("apikey: negative cache TTL")
		}
		o.cacheTTL = d
		return nil
	}
}

// WithUsageFlushInterval sets how often buffered usage is written (default 1 s).
func WithUsageFlushInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("apikey: flush interval must be positive")
		}
		o.flushInterval = d
		return nil
	}
}

// WithUsageRetention sets how long usage histograms are kept (default
// MaxUsageWindow, 90 days; 0 keeps them forever). Older rows are deleted
// by the background loop about once an hour.
func WithUsageRetention(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return errors.New("apikey: negative usage retention")
		}
		o.retention = d
		return nil
	}
}

// WithLogger sets a logger for background failures (usage flushes). Key
// strings and tokens are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { o.logger = l; return nil }
}

// MinAdminTokenLength is the shortest ADMIN_TOKEN accepted.
const MinAdminTokenLength = 16

// WithAdminToken sets the ADMIN_TOKEN: a bearer token that may create keys.
// Only its SHA-256 is kept in memory.
func WithAdminToken(token string) Option {
	return func(o *options) error {
		if token != "" && len(token) < MinAdminTokenLength {
			return errors.New("apikey: ADMIN_TOKEN must be at least 16 characters")
		}
		o.adminToken = token
		return nil
	}
}

// Service manages the key lifecycle, authenticates keys and records usage.
// It is safe for concurrent use. Close it to flush buffered usage.
type Service struct {
	store  Store
	now    func() time.Time
	grace  time.Duration
	logger *slog.Logger

	adminHash [32]byte
	hasAdmin  bool

	cacheTTL time.Duration
	cacheMax int
	cacheMu  sync.RWMutex
	cache    map[string]cacheEntry
	gen      atomic.Uint64 // bumped by every invalidation

	usage     usageBuffer
	retention time.Duration
	pruned    time.Time // last PruneUsage, touched by the flush loop only
	flushMu   sync.Mutex
	stop      chan struct{}
	flushDone chan struct{}
	closeOnce sync.Once
}

type cacheEntry struct {
	key     *Key // nil: no such key (negative entry)
	hash    [32]byte
	fetched time.Time
}

// New returns a Service over store and starts its usage flusher.
func New(store Store, opts ...Option) (*Service, error) {
	if store == nil {
		return nil, errors.New("apikey: nil store")
	}
	o := options{
		now: time.Now, grace: DefaultRotationGrace, cacheTTL: DefaultCacheTTL, cacheMax: 100_000,
		flushInterval: DefaultFlushInterval, usageMax: 50_000, retention: MaxUsageWindow,
	}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		store: store, now: o.now, grace: o.grace, logger: o.logger,
		cacheTTL: o.cacheTTL, cacheMax: o.cacheMax, cache: map[string]cacheEntry{},
		usage:     usageBuffer{cells: map[usageCell]usageTotals{}, max: o.usageMax, kick: make(chan struct{}, 1)},
		stop:      make(chan struct{}),
		flushDone: make(chan struct{}),
		retention: o.retention,
	}
	if o.adminToken != "" {
		s.adminHash, s.hasAdmin = sha256.Sum256([]byte(o.adminToken)), true
	}
	go s.flushLoop(o.flushInterval)
	return s, nil
}

// CreateParams describe a new key. Zero values take defaults: Env Live,
// Tier Free, Scopes DefaultScopes().
type CreateParams struct {
	Env          Env
	Name         string
	Tier         Tier
	Scopes       []Scope
	Organization string
	AllowedIPs   []netip.Prefix
	Restricted   bool
	RateLimit    int
	DailyQuota   int
	ExpiresAt    time.Time
	CreatedBy    string
}

// Create mints a key and returns its string, to be shown once, and its
// description. Only the string's SHA-256 is stored.
func (s *Service) Create(ctx context.Context, p CreateParams) (string, *Key, error) {
	if p.Env == "" {
		p.Env = Live
	}
	if p.Tier == "" {
		p.Tier = Free
	}
	if p.Scopes == nil {
		p.Scopes = DefaultScopes()
	}
	switch {
	case !p.Env.Valid():
		return "", nil, fmt.Errorf("%w: unknown key environment %q", ErrBadRequest, p.Env)
	case !p.Tier.Valid():
		return "", nil, fmt.Errorf("%w: unknown tier %q", ErrBadRequest, p.Tier)
	case p.RateLimit < 0:
		return "", nil, fmt.Errorf("%w: negative rate limit", ErrBadRequest)
	case len(p.Name) > 200 || len(p.Organization) > 200:
		return "", nil, fmt.Errorf("%w: name or organization longer than 200 bytes", ErrBadRequest)
	case hasControl(p.Name):
		return "", nil, fmt.Errorf("%w: name contains control characters", ErrBadRequest)
	case hasControl(p.Organization):
		return "", nil, fmt.Errorf("%w: organization contains control characters", ErrBadRequest)
	case !p.ExpiresAt.IsZero() && !p.ExpiresAt.After(s.now()):
		return "", nil, fmt.Errorf("%w: expires_at is in the past", ErrBadRequest)
	}
	for _, sc := range p.Scopes {
		if _, err := ParseScope(string(sc)); err != nil {
			return "", nil, err
		}
	}
	scopes := slices.Clone(p.Scopes)
	slices.Sort(scopes)
	k := Key{
		Env: p.Env, Name: p.Name, Tier: p.Tier, Scopes: slices.Compact(scopes), Organization: p.Organization,
		AllowedIPs: slices.Clone(p.AllowedIPs), Restricted: p.Restricted, RateLimit: p.RateLimit,
		DailyQuota: p.DailyQuota, CreatedAt: s.now().UTC().Truncate(time.Microsecond),
		CreatedBy: p.CreatedBy,
	}
	if !p.ExpiresAt.IsZero() {
		k.ExpiresAt = p.ExpiresAt.UTC().Truncate(time.Microsecond)
	}
	return s.insertNew(ctx, k, func(sk StoredKey) error { return s.store.InsertKey(ctx, sk) })
}

// hasControl reports whether s holds a control character (C0, DEL or
// C1) or is not UTF-8: such names would corrupt logs, listings and
// terminals that show them.
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// insertNew draws a token for k (retrying on the unlikely id collision)
// and stores it through insert.
func (s *Service) insertNew(ctx context.Context, k Key, insert func(StoredKey) error) (string, *Key, error) {
	lineageIsNew := k.Lineage == ""
	for attempt := 0; ; attempt++ {
		tok, err := newToken(k.Env)
		if err != nil {
			return "", nil, err
		}
		k.ID = tok.ID
		if lineageIsNew {
			k.Lineage = tok.ID
		}
		err = insert(StoredKey{Key: k, Hash: tok.Hash()})
		if errors.Is(err, ErrConflict) && attempt < 3 {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		s.invalidate(k.ID) // drop a negative entry for this id
		return tok.String(), k.clone(), nil
	}
}

// Authenticate checks a key string presented by a caller at remote. It
// returns ErrInvalid for a malformed, unknown, expired or revoked key (401)
// and ErrForbidden for a valid key used from an address outside its
// allow-list or belonging to a restricted account (403). A cached key costs
// no database round trip; the hash comparison is constant-time.
func (s *Service) Authenticate(ctx context.Context, raw string, remote netip.Addr) (*Key, error) {
	tok, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	e, err := s.lookup(ctx, tok.ID)
	if err != nil {
		return nil, err
	}
	h := tok.Hash()
	if e.key == nil || subtle.ConstantTimeCompare(h[:], e.hash[:]) != 1 {
		return nil, ErrInvalid
	}
	if !e.key.Active(s.now()) {
		return nil, ErrInvalid
	}
	if !e.key.AllowsAddr(remote) || e.key.Restricted {
		return nil, ErrForbidden
	}
	return e.key.clone(), nil
}

// lookup returns the key by id from the cache or the store.
func (s *Service) lookup(ctx context.Context, id string) (cacheEntry, error) {
	now := s.now()
	if s.cacheTTL > 0 {
		s.cacheMu.RLock()
		e, ok := s.cache[id]
		s.cacheMu.RUnlock()
		if ok && now.Sub(e.fetched) < s.cacheTTL && !now.Before(e.fetched) {
			return e, nil
		}
	}
	gen := s.gen.Load()
	sk, err := s.store.KeyByID(ctx, id)
	var e cacheEntry
	switch {
	case err == nil:
		e = cacheEntry{key: &sk.Key, hash: sk.Hash, fetched: now}
	case errors.Is(err, ErrNotFound):
		e = cacheEntry{fetched: now}
	default:
		return cacheEntry{}, fmt.Errorf("apikey: looking up key: %w", err)
	}
	if s.cacheTTL > 0 {
		s.cacheMu.Lock()
		if s.gen.Load() == gen { // no invalidation raced with the read
			if len(s.cache) >= s.cacheMax {
				for k := range s.cache { // evict an arbitrary tenth
					delete(s.cache, k)
					if len(s.cache) < s.cacheMax*9/10 {
						break
					}
				}
			}
			s.cache[id] = e
		}
		s.cacheMu.Unlock()
	}
	return e, nil
}

func (s *Service) invalidate(id string) {
	s.gen.Add(1)
	s.cacheMu.Lock()
	delete(s.cache, id)
	s.cacheMu.Unlock()
}

// Get returns a key's description; ErrNotFound if there is none.
func (s *Service) Get(ctx context.Context, id string) (*Key, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	sk, err := s.store.KeyByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return sk.Key.clone(), nil
}

// List returns a page of keys (oldest first) and the total number.
// Offset must be ≥ 0 and limit in 1..MaxPageSize, else ErrBadRequest.
func (s *Service) List(ctx context.Context, o ListOptions) ([]Key, int, error) {
	if o.Offset < 0 || o.Limit < 1 || o.Limit > MaxPageSize {
		return nil, 0, fmt.Errorf("%w: offset must be ≥ 0 and limit 1-%d", ErrBadRequest, MaxPageSize)
	}
	return s.store.ListKeys(ctx, o)
}

// Rotate issues a successor of the key id with the same tier, scopes,
// organization, allow-list and limits, and makes the old key expire after
// the rotation grace (24 h by default). It returns the new key string, shown
// once. A key that is revoked, expired or already rotated cannot be rotated
// (ErrInvalid, ErrInvalid, ErrConflict).
func (s *Service) Rotate(ctx context.Context, id string) (string, *Key, error) {
	old, err := s.Get(ctx, id)
	if err != nil {
		return "", nil, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if !old.Active(now) {
		return "", nil, ErrInvalid
	}
	if old.RotatedTo != "" {
		return "", nil, fmt.Errorf("%w: key was already rotated", ErrConflict)
	}
	next := Key{
		Env: old.Env, Name: old.Name, Tier: old.Tier, Scopes: old.Scopes, Organization: old.Organization,
		AllowedIPs: old.AllowedIPs, Restricted: old.Restricted, RateLimit: old.RateLimit,
		DailyQuota: old.DailyQuota, CreatedAt: now, CreatedBy: old.ID, Lineage: old.Budget(),
	}
	raw, k, err := s.insertNew(ctx, next, func(sk StoredKey) error {
		return s.store.RotateKey(ctx, id, now.Add(s.grace), sk)
	})
	s.invalidate(id)
	return raw, k, err
}

// Revoke stops a key at once (in this process; other replicas within the
// cache TTL). Revoking a revoked key is not an error.
func (s *Service) Revoke(ctx context.Context, id string) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	err := s.store.RevokeKey(ctx, id, s.now().UTC().Truncate(time.Microsecond))
	s.invalidate(id)
	return err
}

// SetWhitelist restricts the key to the given prefixes (see
// ParseAllowList); an empty list lifts the restriction.
func (s *Service) SetWhitelist(ctx context.Context, id string, ips []netip.Prefix) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	if len(ips) > 1000 {
		return fmt.Errorf("%w: at most 1000 allow-list entries", ErrBadRequest)
	}
	err := s.store.SetAllowedIPs(ctx, id, ips)
	s.invalidate(id)
	return err
}

// RecordUsage notes one request made with the key. It only updates an
// in-memory histogram; a background loop writes the buffer in batches
// (every second by default, sooner when it grows large, and on Close).
// A status ≥ 400 counts as an error.
func (s *Service) RecordUsage(keyID string, status int, latency time.Duration) {
	s.usage.add(keyID, s.now(), status, latency)
}

// Flush writes buffered usage now. On failure the counts are kept for the
// next attempt.
func (s *Service) Flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	counts := s.usage.take()
	if len(counts) == 0 {
		return nil
	}
	if err := s.store.AddUsage(ctx, counts); err != nil {
		s.usage.putBack(counts)
		return fmt.Errorf("apikey: writing usage: %w", err)
	}
	return nil
}

// PruneUsage deletes usage older than the retention (WithUsageRetention)
// at now. The background loop calls it about once an hour.
func (s *Service) PruneUsage(ctx context.Context) error {
	if s.retention <= 0 {
		return nil
	}
	if err := s.store.PruneUsage(ctx, s.now().Add(-s.retention).Unix()/60); err != nil {
		return fmt.Errorf("apikey: pruning usage: %w", err)
	}
	return nil
}

// Usage reports the key's requests, errors and latency percentiles over the
// window ending now, at minute granularity (the minute the window starts in
// is included whole). Buffered usage is flushed first.
func (s *Service) Usage(ctx context.Context, id string, window time.Duration) (*Usage, error) {
	if window <= 0 || window > MaxUsageWindow {
		return nil, fmt.Errorf("%w: window must be between 1 s and %s", ErrBadRequest, MaxUsageWindow)
	}
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	if err := s.Flush(ctx); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	from := now.Add(-window)
	counts, err := s.store.UsageCounts(ctx, id, from.Unix()/60, now.Unix()/60)
	if err != nil {
		return nil, fmt.Errorf("apikey: reading usage: %w", err)
	}
	u := &Usage{KeyID: id, From: from, To: now}
	hist := make(map[int]int64, len(counts))
	for _, c := range counts {
		u.Requests += c.Requests
		u.Errors += c.Errors
		hist[c.Bucket] += c.Requests
	}
	ps := percentiles(hist, u.Requests, 0.50, 0.95, 0.99)
	u.P50, u.P95, u.P99 = ps[0], ps[1], ps[2]
	return u, nil
}

// Close stops the flusher and writes what is buffered. The Service must not
// be used afterwards.
func (s *Service) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.stop) })
	select {
	case <-s.flushDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Flush(ctx)
}

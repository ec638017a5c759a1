// Package redisstore keeps a ratelimit.Limiter's budgets in Redis, shared by
// every replica using the same Redis and key prefix. It is its own package
// so that a program (or package server) using the in-process limiter does
// not link a Redis client.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/healthagents/healthagents/ratelimit"
)

// DefaultPrefix is the prefix of the keys New writes.
const DefaultPrefix = "healthagents:rl:"

// Store is a ratelimit.Store in Redis. All rules of a request are checked
// and taken in one Lua script, atomically: token buckets as GCRA (one
// integer per bucket: its theoretical arrival time), calendar windows as
// counters keyed by window start. Times come from the limiter's clock, so
// replicas need synchronised clocks (NTP); a skew of s shifts budgets by
// about s.
type Store struct {
	client redis.UniversalClient
	prefix string
}

// New returns the store on client under prefix ("" means DefaultPrefix).
// Two stores with the same prefix on one Redis share their budgets.
func New(client redis.UniversalClient, prefix string) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisstore: nil Redis client")
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{client: client, prefix: prefix}, nil
}

// NewLimiter returns ratelimit.NewShared over New(client, prefix): when
// Redis fails, the request is counted in process and the failure logged
// (ratelimit.WithLogger).
func NewLimiter(client redis.UniversalClient, prefix string, opts ...ratelimit.Option) (*ratelimit.Limiter, error) {
	st, err := New(client, prefix)
	if err != nil {
		return nil, err
	}
	return ratelimit.NewShared(st, opts...)
}

// FromURL returns NewLimiter over a client of url (REDIS_URL) when url is
// set, else the in-process ratelimit.New. The returned close function
// releases the Redis client (a no-op for the in-process limiter).
func FromURL(url string, opts ...ratelimit.Option) (*ratelimit.Limiter, func() error, error) {
	if url == "" {
		l, err := ratelimit.New(opts...)
		return l, func() error { return nil }, err
	}
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, fmt.Errorf("ratelimit: REDIS_URL: %w", err)
	}
	c := redis.NewClient(ro)
	l, err := NewLimiter(c, "", opts...)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return l, c.Close, nil
}

// takeScript: KEYS[i] is rule i's key; ARGV[1] is now in µs, ARGV[2] the
// units to take (n ≥ 0), then per rule limit, window (µs) and kind (0 token
// bucket, 1 calendar window). Returns per rule {allowed, remaining, reset
// µs, retry µs}; nothing is written unless every rule has n left.
var takeScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local take = tonumber(ARGV[2])
local n = #KEYS
local st = {}
local ok = true
for i = 1, n do
  local limit = tonumber(ARGV[3*i])
  local win = tonumber(ARGV[3*i+1])
  local kind = tonumber(ARGV[3*i+2])
  local cur = redis.call('GET', KEYS[i])
  local s = {kind = kind, limit = limit, win = win}
  if kind == 0 then
    local t = win / limit
    local tat = now
    if cur then tat = math.max(tonumber(cur), now) end
    s.t = t
    s.tat = tat
    s.new_tat = math.floor(tat + take * t + 0.5)
    s.allowed = (s.new_tat - now) <= win
  else
    local count = 0
    if cur then count = tonumber(cur) end
    s.count = count
    s.start = now - (now % win)
    s.allowed = count + take <= limit
  end
  if not s.allowed then ok = false end
  st[i] = s
end
local out = {}
for i = 1, n do
  local s = st[i]
  local allowed = 0
  if s.allowed then allowed = 1 end
  if s.kind == 0 then
    local tat = s.tat
    if ok and take > 0 then
      tat = s.new_tat
      redis.call('SET', KEYS[i], string.format('%d', tat), 'PX', math.max(math.ceil((tat - now) / 1000), 1) + 1000)
    end
    local remaining = math.floor((s.win - (tat - now)) / s.t)
    if remaining < 0 then remaining = 0 end
    local retry = 0
    if not s.allowed then retry = s.new_tat - s.win - now end
    out[i] = {allowed, remaining, string.format('%d', tat), string.format('%d', retry)}
  else
    local count = s.count
    if ok and take > 0 then
      count = redis.call('INCRBY', KEYS[i], take)
      redis.call('PEXPIRE', KEYS[i], math.ceil((s.start + s.win - now) / 1000) + 60000)
    end
    local remaining = s.limit - count
    if remaining < 0 then remaining = 0 end
    local retry = 0
    if not s.allowed then retry = s.start + s.win - now end
    out[i] = {allowed, remaining, string.format('%d', s.start + s.win), string.format('%d', retry)}
  end
end
return out
`)

// Take implements ratelimit.Store.
func (b *Store) Take(ctx context.Context, now time.Time, rules []ratelimit.Rule, n int) ([]ratelimit.State, error) {
	nowUS := now.UnixMicro()
	keys := make([]string, len(rules))
	args := make([]any, 2, 2+3*len(rules))
	args[0], args[1] = nowUS, n
	for i, r := range rules {
		win := r.Window.Microseconds()
		keys[i] = b.prefix + r.Bucket
		kind := 0
		if r.Kind == ratelimit.CalendarWindow {
			kind = 1
			keys[i] += ":" + strconv.FormatInt(nowUS-nowUS%win, 10)
		}
		args = append(args, r.Limit, win, kind)
	}
	res, err := takeScript.Run(ctx, b.client, keys, args...).Slice()
	if err != nil {
		return nil, err
	}
	return parseStates(res, len(rules))
}

func parseStates(res []any, n int) ([]ratelimit.State, error) {
	if len(res) != n {
		return nil, fmt.Errorf("redisstore: script returned %d results for %d rules", len(res), n)
	}
	states := make([]ratelimit.State, n)
	for i, r := range res {
		row, ok := r.([]any)
		if !ok || len(row) != 4 {
			return nil, errors.New("redisstore: malformed script result")
		}
		allowed, ok1 := row[0].(int64)
		remaining, ok2 := row[1].(int64)
		resetS, ok3 := row[2].(string)
		retryS, ok4 := row[3].(string)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, errors.New("redisstore: malformed script result")
		}
		reset, err1 := strconv.ParseInt(resetS, 10, 64)
		retry, err2 := strconv.ParseInt(retryS, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, errors.New("redisstore: malformed script result")
		}
		states[i] = ratelimit.State{
			Allowed:    allowed == 1,
			Remaining:  int(remaining),
			Reset:      time.UnixMicro(reset),
			RetryAfter: time.Duration(max(retry, 0)) * time.Microsecond,
		}
	}
	return states, nil
}

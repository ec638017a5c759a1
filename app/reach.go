package app

import (
	"context"
	"fmt"
	"time"

	"github.com/healthagents/healthagents/server"
	"github.com/redis/go-redis/v9"
)

// checkRedis refuses to start when REDIS_URL is set and Redis does not
// answer a PING within 3 s: rate limits shared across replicas must not
// silently fall back to per-process ones. The error names the address,
// never the password.
func checkRedis(ctx context.Context, url string) error {
	if url == "" {
		return nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return fmt.Errorf("REDIS_URL: not a Redis URL (scheme %q)", schemeOf(url))
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("REDIS_URL: Redis at %s does not answer; start it or unset REDIS_URL", opts.Addr)
	}
	return nil
}

// redisCheck is the readiness check of REDIS_URL, on a client of its own
// (closed with the App); none when REDIS_URL is unset.
func (a *App) redisCheck(url string) []server.Check {
	if url == "" {
		return nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil // refused earlier by ConfigFromEnv and checkRedis
	}
	c := redis.NewClient(opts)
	a.closers = append(a.closers, c)
	return []server.Check{{Name: "redis", Ping: func(ctx context.Context) error { return c.Ping(ctx).Err() }}}
}

package apikey

import "time"

// Test hooks.
var (
	Checksum     = checksum
	BucketBounds = bucketBounds
)

func NewTokenForTest(env Env) (string, error) {
	t, err := newToken(env)
	return t.String(), err
}

func Micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

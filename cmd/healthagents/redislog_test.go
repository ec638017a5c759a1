package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisLogLinesAreJSON: a go-redis log line becomes one JSON object
// (a warning), never plain text in the JSON log.
func TestRedisLogLinesAreJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	redisLogger{newLogger(&buf, 0)}.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %v\n", 5, "dial tcp 127.0.0.1:1: connect: connection refused")
	var line map[string]any
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &line), buf.String())
	assert.Equal(t, "WARN", line["level"])
	assert.Equal(t, "redis client", line["msg"])
	assert.Equal(t, "redis: connection pool: failed to dial after 5 attempts: dial tcp 127.0.0.1:1: connect: connection refused", line["detail"])
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// redisLogger routes go-redis's own log lines (a pool that cannot dial, a
// connection dropped), which it otherwise writes as plain text to standard
// error, into the JSON log as warnings, so a log pipeline parsing one JSON
// object per line never meets them raw.
type redisLogger struct{ logger *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.logger.WarnContext(ctx, "redis client", "detail", strings.TrimSpace(fmt.Sprintf(format, v...)))
}

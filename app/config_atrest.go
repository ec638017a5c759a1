package app

import (
	"fmt"
	"time"
)

// readAtRest reads the settings of issue 19's at-rest half: ENVELOPE_TTL.
func (c *Config) readAtRest(getenv func(string) string) error {
	if v := getenv("ENVELOPE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 10*365*24*time.Hour {
			return fmt.Errorf("ENVELOPE_TTL must be a duration of at least 1s (e.g. 24h, 15m); unset for no limit")
		}
		c.EnvelopeTTL = d
	}
	return nil
}

package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStartupWarnings: development mode always warns; production warns
// about an open CORS policy until CORS_ORIGINS names the allowed origins.
func TestStartupWarnings(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cfg  Config
		want []string
	}{
		"development":                      {Config{}, []string{developmentWarning}},
		"development, CORS set":            {Config{CORSOrigins: []string{"https://a.example"}}, []string{developmentWarning}},
		"production without CORS_ORIGINS":  {Config{Production: true}, []string{openCORSWarning}},
		"production with CORS_ORIGINS set": {Config{Production: true, CORSOrigins: []string{"https://a.example"}}, nil},
	} {
		assert.Equal(t, tc.want, startupWarnings(tc.cfg), name)
	}
}

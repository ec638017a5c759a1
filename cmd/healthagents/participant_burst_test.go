package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --burst is how many requests the participant makes back to back before
// --rate spaces them: 5 unless given, from 1 to --rate.
func TestParticipantBurstFlag(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "a.csv")
	require.NoError(t, os.WriteFile(data, []byte("x"), 0o600))
	env := func(string) string { return "" }
	parse := func(args ...string) (participantOptions, error) {
		return parseParticipant(append([]string{"--server", "http://127.0.0.1:1", "--api-key", "k", "--data", data}, args...), env, io.Discard)
	}
	o, err := parse()
	require.NoError(t, err)
	assert.Equal(t, 60, o.rate)
	assert.Equal(t, 5, o.burst)
	o, err = parse("--rate", "100", "--burst", "100")
	require.NoError(t, err)
	assert.Equal(t, 100, o.burst)
	for _, args := range [][]string{{"--burst", "0"}, {"--burst", "61"}, {"--rate", "100", "--burst", "101"}} {
		_, err := parse(args...)
		require.Error(t, err, "%v", args)
		assert.Equal(t, "participant: --burst must be from 1 to --rate", err.Error(), "%v", args)
	}
}

package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
)

// TestConfigZeroValueIsTheDefaults: a Config's zero fields are what
// ConfigFromEnv reads from an empty environment (privacy on at the
// documented budget), or the Config is refused naming the field.
func TestConfigZeroValueIsTheDefaults(t *testing.T) {
	t.Parallel()
	env, err := ConfigFromEnv(func(string) string { return "" })
	require.NoError(t, err)
	require.True(t, env.Federated.Privacy, "the documented default")

	c, err := Config{DataDir: t.TempDir()}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, env.Federated, c.Federated, "zero Federated: the FEDERATED_* defaults")
	assert.True(t, c.Federated.Privacy)
	assert.Positive(t, c.Federated.Epsilon)

	_, err = Config{}.withDefaults()
	require.ErrorContains(t, err, "Config.DataDir (DATA_DIR)")

	for name, tc := range map[string]struct {
		run  federated.RunSettings
		want string
	}{
		"fail/rounds only":        {federated.RunSettings{Rounds: 5}, "FEDERATED_EPSILON"},
		"fail/privacy, no budget": {federated.RunSettings{Privacy: true, Rounds: 5}, "FEDERATED_EPSILON"},
	} {
		_, err := Config{DataDir: "d", Federated: tc.run}.withDefaults()
		require.ErrorContains(t, err, "app: Config.Federated: "+tc.want, name)
	}

	off := env.Federated
	off.Privacy = false
	c, err = Config{DataDir: "d", Federated: off}.withDefaults()
	require.NoError(t, err, "privacy off, said whole")
	assert.False(t, c.Federated.Privacy)
}

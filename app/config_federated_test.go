package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
)

func TestFederatedSettings(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ConfigFromEnv(env(nil))
	require.NoError(t, err)
	fc := c.federatedConfig()
	assert.Equal(t, federated.DefaultTask().Hash(), fc.Task.Hash(), "unset: the built-in task")
	require.NotNil(t, fc.Privacy, "unset: DP on")
	assert.Equal(t, 0.1, fc.Privacy.Budget.Epsilon)

	task := "../testdata/wdbc/task.json"
	c, err = ConfigFromEnv(env(map[string]string{
		"FEDERATED_TASK": task, "FEDERATED_DP": "off", "FEDERATED_ROUNDS": "7", "FEDERATED_CLIP_NORM": "2",
		"FEDERATED_MIN_PARTICIPANTS": "4", "FEDERATED_TARGET_PARTICIPANTS": "5", "FEDERATED_ROUND_TIMEOUT": "90s",
	}))
	require.NoError(t, err)
	fc = c.federatedConfig()
	assert.Equal(t, "wdbc/v1", fc.Task.Name)
	assert.Len(t, fc.Task.Features, 30)
	assert.True(t, fc.DisablePrivacy)
	assert.Nil(t, fc.Privacy)
	assert.Equal(t, 7, fc.MaxRounds)
	assert.Equal(t, 2.0, fc.ClipNorm)
	assert.Equal(t, 4, fc.MinParticipants)
	assert.Equal(t, 5, fc.TargetParticipants)
	assert.Equal(t, 90*time.Second, fc.RoundTimeout)
	assert.Equal(t, 0.2, c.FederatedTask.HeldOut)
	assert.False(t, c.Federated.Proofs, "proofs are off by default")
	c, err = ConfigFromEnv(env(map[string]string{"FEDERATED_PROOFS": "on"}))
	require.NoError(t, err)
	assert.True(t, c.Federated.Proofs)

	c, err = ConfigFromEnv(env(map[string]string{"FEDERATED_EPSILON": "8", "FEDERATED_DELTA": "1e-6", "FEDERATED_ROUNDS": "20"}))
	require.NoError(t, err)
	fc = c.federatedConfig()
	require.NotNil(t, fc.Privacy)
	assert.Equal(t, 8.0, fc.Privacy.Budget.Epsilon)
	assert.Equal(t, 1e-6, fc.Privacy.Budget.Delta)

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"id": "x", "features": [{"name": "a", "mean": 0, "scale": 0}], "label": {"positive": "1", "negative": "0"}, "model": {"type": "logistic_regression"}, "learning_rate": 0.5, "local_epochs": 1}`), 0o600))
	typo := filepath.Join(dir, "typo.json")
	require.NoError(t, os.WriteFile(typo, []byte(`{"id": "x", "featurs": []}`), 0o600))
	for setting, cases := range map[string][]map[string]string{
		"FEDERATED_DP":                  {{"FEDERATED_DP": "maybe"}},
		"FEDERATED_PROOFS":              {{"FEDERATED_PROOFS": "sometimes"}},
		"FEDERATED_EPSILON":             {{"FEDERATED_EPSILON": "-1"}, {"FEDERATED_EPSILON": "NaN"}},
		"FEDERATED_DELTA":               {{"FEDERATED_DELTA": "1"}},
		"FEDERATED_CLIP_NORM":           {{"FEDERATED_CLIP_NORM": "0"}},
		"FEDERATED_ROUNDS":              {{"FEDERATED_ROUNDS": "0"}, {"FEDERATED_ROUNDS": "ten"}},
		"FEDERATED_MIN_PARTICIPANTS":    {{"FEDERATED_MIN_PARTICIPANTS": "2"}},
		"FEDERATED_TARGET_PARTICIPANTS": {{"FEDERATED_MIN_PARTICIPANTS": "5", "FEDERATED_TARGET_PARTICIPANTS": "4"}},
		"FEDERATED_ROUND_TIMEOUT":       {{"FEDERATED_ROUND_TIMEOUT": "5"}, {"FEDERATED_ROUND_TIMEOUT": "10ms"}},
		"FEDERATED_TASK":                {{"FEDERATED_TASK": filepath.Join(dir, "none.json")}, {"FEDERATED_TASK": bad}, {"FEDERATED_TASK": typo}},
	} {
		for _, m := range cases {
			_, err := ConfigFromEnv(env(m))
			require.Error(t, err, "%v", m)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, setting), "%q names %s first", msg, setting)
			assert.NotContains(t, msg, "\n", "one line")
		}
	}
	_, err = ConfigFromEnv(env(map[string]string{"FEDERATED_TASK": bad}))
	assert.Contains(t, err.Error(), "features[0].scale", "the task file's error names the field")
}

// FEDERATED_TASK may list several task files: the first is the default
// task, the others run beside it; a repeated id or an empty entry is
// refused, naming the setting.
func TestFederatedTaskList(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	dir := t.TempDir()
	b, err := os.ReadFile("../testdata/wdbc/task.json")
	require.NoError(t, err)
	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(strings.Replace(string(b), `"wdbc/v1"`, `"wdbc/v2"`, 1)), 0o600))
	c, err := ConfigFromEnv(env(map[string]string{"FEDERATED_TASK": "../testdata/wdbc/task.json, " + other}))
	require.NoError(t, err)
	require.Len(t, c.FederatedTasks, 2)
	assert.Equal(t, "wdbc/v1", c.FederatedTask.ID, "the first is the default task")
	assert.Equal(t, "wdbc/v2", c.FederatedTasks[1].ID)
	for _, list := range []string{"../testdata/wdbc/task.json,../testdata/wdbc/task.json", other + ",,", other + "," + filepath.Join(dir, "none.json")} {
		_, err := ConfigFromEnv(env(map[string]string{"FEDERATED_TASK": list}))
		require.Error(t, err, list)
		assert.True(t, strings.HasPrefix(err.Error(), "FEDERATED_TASK"), err.Error())
		assert.NotContains(t, err.Error(), "\n")
	}
}

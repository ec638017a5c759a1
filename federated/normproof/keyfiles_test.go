package normproof

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys set up once are kept in the directory and read back by a restarted
// coordinator; a participant that fetches them proves what the coordinator
// verifies. Broken key bytes are errors, not panics.
func TestKeysKeptAndFetched(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	coord, err := NewServiceDir(dir)
	require.NoError(t, err)
	k, err := coord.Keys(testShape)
	require.NoError(t, err)
	for _, ext := range []string{".pk", ".vk"} {
		fi, err := os.Stat(filepath.Join(dir, testShape.Name()+ext))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	pk, vk, err := k.EncodeKeys()
	require.NoError(t, err)

	restarted, err := NewServiceDir(dir)
	require.NoError(t, err)
	k2, err := restarted.Keys(testShape)
	require.NoError(t, err)
	_, vk2, err := k2.EncodeKeys()
	require.NoError(t, err)
	assert.Equal(t, vk, vk2, "read back, not set up again")

	fetches := 0
	participant := NewServiceFetching(func(s Shape) ([]byte, []byte, error) {
		fetches++
		require.Equal(t, testShape, s)
		return pk, vk, nil
	})
	kp, err := participant.Keys(testShape)
	require.NoError(t, err)
	_, err = participant.Keys(testShape)
	require.NoError(t, err)
	assert.Equal(t, 1, fetches, "fetched once")
	ps := newRound(t, [3][]int64{honestUpdate(1, 8, 10), honestUpdate(0.5, 3, 10), honestUpdate(0.2, 1, 10)}, 10)
	proof, err := Prove(kp, &ps[0].st, &ps[0].sec)
	require.NoError(t, err)
	require.NoError(t, Verify(k2.VK, testShape, &ps[0].st, proof), "the restarted coordinator verifies the fetched key's proof")

	for name, b := range map[string][2][]byte{
		"truncated pk": {pk[:len(pk)/2], vk}, "garbage vk": {pk, []byte("not a key")}, "empty": {nil, nil},
	} {
		_, err := DecodeKeys(testShape, b[0], b[1])
		assert.Error(t, err, name)
	}
	_, err = DecodeKeys(Shape{}, pk, vk)
	assert.Error(t, err, "invalid shape")
	require.NoError(t, os.WriteFile(filepath.Join(dir, testShape.Name()+".pk"), []byte("broken"), 0o600))
	broken, err := NewServiceDir(dir)
	require.NoError(t, err)
	_, err = broken.Keys(testShape)
	assert.Error(t, err, "a damaged key file is reported, not replaced silently")
}

package zkp

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/testcache"
)

// The beacons that seal the fixture ceremony's phases.
var (
	fixturePhase1Beacon = []byte("healthagents test fixture: phase 1")
	fixturePhase2Beacon = []byte("healthagents test fixture: phase 2")
)

// ceremonyFixture writes under dir the key files of a ceremony over every
// circuit, as a coordinator would, and returns them. The ceremony is
// seeded: no contributor, only the fixed beacons, so it is deterministic —
// and forgeable by anyone who knows the beacons. A test fixture, never
// production keys (docs/decisions/zkp.md lists the real steps, with
// contributors).
//
// Its output is a function of the compiled circuit, the beacons and gnark's
// code, so it is kept in the test cache under a key naming all three: it
// runs (minutes of CPU: phase-2 initialisation runs FFTs over group
// elements) once per circuit version and gnark version, and every later
// run decodes its files as any ceremony's, with LoadCeremony's checks.
func ceremonyFixture(t *testing.T, dir string) map[string]CeremonyKeys {
	t.Helper()
	c, err := testcache.Open()
	require.NoError(t, err)
	commonsOf := map[uint64]*mpcsetup.SrsCommons{}
	files := map[string]CeremonyKeys{}
	for _, name := range CircuitNames() {
		digest, err := CircuitDigest(name)
		require.NoError(t, err)
		key := testcache.Key([]byte("zkp-ceremony-fixture/v1"), []byte(name), []byte(digest),
			fixturePhase1Beacon, fixturePhase2Beacon, []byte(gnarkVersions()))
		packed, err := c.Get(key, func() ([]byte, error) {
			r, err := CompileCircuit(name)
			if err != nil {
				return nil, err
			}
			// Phase 1 (powers of tau) per domain size, sealed with the
			// beacon: a circuit's phase 2 takes the commons of its own
			// domain.
			domain := ecc.NextPowerOfTwo(uint64(r.GetNbConstraints()))
			if commonsOf[domain] == nil {
				c, err := mpcsetup.VerifyPhase1(domain, fixturePhase1Beacon)
				if err != nil {
					return nil, err
				}
				commonsOf[domain] = &c
			}
			// Phase 2 per circuit, sealed with the beacon.
			pk, vk, err := mpcsetup.VerifyPhase2(r, commonsOf[domain], fixturePhase2Beacon)
			if err != nil {
				return nil, err
			}
			var pkb, vkb bytes.Buffer
			if _, err := pk.WriteTo(&pkb); err != nil {
				return nil, err
			}
			if _, err := vk.WriteTo(&vkb); err != nil {
				return nil, err
			}
			return testcache.Pack(map[string][]byte{"pk": pkb.Bytes(), "vk": vkb.Bytes()}), nil
		})
		require.NoError(t, err)
		pair, err := testcache.Unpack(packed, []string{"pk", "vk"})
		require.NoError(t, err)
		f := CeremonyKeys{ProvingKey: filepath.Join(dir, name+".ceremony.pk"), VerifyingKey: filepath.Join(dir, name+".ceremony.vk")}
		require.NoError(t, os.WriteFile(f.ProvingKey, pair["pk"], 0o600))
		require.NoError(t, os.WriteFile(f.VerifyingKey, pair["vk"], 0o600))
		files[name] = f
	}
	return files
}

// gnarkVersions names the gnark and gnark-crypto modules this test binary
// was built with.
func gnarkVersions() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var out string
	for _, d := range info.Deps {
		if d.Path == "github.com/consensys/gnark" || d.Path == "github.com/consensys/gnark-crypto" {
			out += d.Path + "@" + d.Version + " " + d.Sum + "\n"
		}
	}
	return out
}

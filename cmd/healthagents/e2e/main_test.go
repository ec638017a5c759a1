package e2e

import (
	"testing"

	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
)

// runAtOnce is how many of the package's tests run at once unless -parallel
// is given: more than it has, so all of them. They wait on their processes
// (rounds, servers starting); at 4 the fifth test waited for one of the
// others to end.
const runAtOnce = 16

func TestMain(m *testing.M) { clitest.MainAtOnce(m, runAtOnce) }

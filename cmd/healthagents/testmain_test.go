package main

import (
	"testing"

	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
)

// runAtOnce is how many of the package's parallel tests run at once unless
// -parallel is given: several wait on server processes starting, on the
// leases a killed server held running out (TestCrashRecovery's two runs,
// TestTwoServeProcesses), on a batch or a federated round.
const runAtOnce = 4

func TestMain(m *testing.M) { clitest.MainAtOnce(m, runAtOnce) }

package main

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// runAtOnce is how many of the package's parallel tests run at once unless
// -parallel is given. Several spend most of their time waiting rather than
// computing: on server processes starting, on the leases a killed server
// held running out (TestCrashRecovery's two runs, TestTwoServeProcesses),
// on a batch or a federated round. With the default (GOMAXPROCS, two on
// the machines the suite is measured on) two such waits held both slots
// while the CPU idled.
const runAtOnce = 4

// TestMain runs runAtOnce tests at once.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", fmt.Sprint(runAtOnce)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

package clitest

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// MainAtOnce is a TestMain body: it runs m's parallel tests n at once
// unless -parallel was given, and exits with m's status. The command's
// tests spend most of their time waiting on processes (servers starting,
// leases running out, federated rounds), not computing, so go test's
// default (GOMAXPROCS, two on the machines the suite is measured on) left
// the CPU idle while two waits held both slots.
func MainAtOnce(m *testing.M, n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", fmt.Sprint(n)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

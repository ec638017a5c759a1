package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// runAtOnce is how many of the package's tests run at once unless -parallel
// is given: all of them. They spend their time waiting on their processes
// (rounds paced by the participants' polling, servers starting), not
// computing, so on two cores the default (GOMAXPROCS) would run them
// nearly one pair after the other.
const runAtOnce = 4

// TestMain runs the tests at once (runAtOnce).
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

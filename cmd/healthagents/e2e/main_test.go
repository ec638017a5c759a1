package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// runAtOnce is how many of the package's tests run at once unless -parallel
// is given: more than it has, so all of them. They spend their time
// waiting on their processes (rounds, servers starting), not computing, so
// on two cores the default (GOMAXPROCS) would run them nearly one pair
// after the other; at 4 the fifth test waited for one of the others to end.
const runAtOnce = 16

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

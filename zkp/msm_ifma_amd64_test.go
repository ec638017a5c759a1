//go:build amd64 && !purego

package zkp

import "testing"

// withoutIFMA turns the IFMA kernels off until t ends.
func withoutIFMA(t *testing.T) {
	old := haveIFMA
	haveIFMA = false
	t.Cleanup(func() { haveIFMA = old })
}

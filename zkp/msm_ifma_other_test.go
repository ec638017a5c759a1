//go:build !amd64 || purego

package zkp

import "testing"

// withoutIFMA does nothing: this build has no IFMA kernels.
func withoutIFMA(*testing.T) {}

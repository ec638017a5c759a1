package zkp

import "context"

// Exported for the external tests of this package (zkp_test).

// SetProvingHook installs f to run inside each proof's goroutine, before
// gnark proves, with the request's context.
func SetProvingHook(p *Prover, f func(ctx context.Context)) { p.proving = f }

// SharedSystem returns the keys shared by the package's tests.
func SharedSystem() *System { return testSys }

// ManualDeadline returns a context whose deadline passes when expire is
// called.
func ManualDeadline() (ctx context.Context, expire func()) { return manualDeadline() }

package main

import "testing"

// The package's two longest tests, declared last (this file's name sorts
// after the others'). They mostly wait (for the leases a killed server
// held to run out, for server starts), so they are best started first and
// run beside the others rather than after them: go test starts the
// last-declared of its paused parallel tests among the first (observed with
// Go 1.26, not promised: the order decides only how long the package takes,
// never what a test checks). Their bodies are in replicas_test.go and
// crash_test.go.

func TestTwoServeProcesses(t *testing.T) { twoServeProcesses(t) }

func TestCrashRecovery(t *testing.T) { crashRecovery(t) }

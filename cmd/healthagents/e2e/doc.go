// Package e2e runs the healthagents binary end to end as a hospital network
// would: a server process with a task file and participant processes, each
// with its own CSV, over HTTP. These tests take minutes; they live in their
// own package so that `go test ./...` gives them their own timeout and runs
// them beside the command's other tests.
package e2e

package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var accuracyLine = regexp.MustCompile(`held-out accuracy (\d\.\d+) on (\d+) records`)

// TestRun trains three hospitals over HTTP against a coordinator on a real
// listener and checks that the global model's held-out accuracy improves.
func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-rounds", "3", "-records", "250", "-poll", "20ms"}, &out), out.String())
	t.Log(out.String())
	assert.Contains(t, out.String(), "differential privacy OFF for this demo")
	var acc []float64
	for _, m := range accuracyLine.FindAllStringSubmatch(out.String(), -1) {
		a, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		acc = append(acc, a)
	}
	require.Len(t, acc, 4, "the untrained model and three rounds")
	assert.Greater(t, acc[len(acc)-1], acc[0]+0.2, "training improved held-out accuracy")
	assert.Greater(t, acc[len(acc)-1], 0.75)
	assert.Contains(t, out.String(), "round 2 closed: model 1.0.3 from 3 hospitals")
	assert.Contains(t, out.String(), "(coordinator, through the secure sum: 1.0.2 scored")
}

func TestRunFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-rounds", "0"}, {"-records", "5"}, {"-url", "http://127.0.0.1:1"}, {"-nope"}} {
		assert.Error(t, run(t.Context(), args, &bytes.Buffer{}), "%v", args)
	}
}

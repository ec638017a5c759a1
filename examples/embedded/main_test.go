package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
)

func TestEmbedded(t *testing.T) {
	t.Parallel()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	for name, getenv := range map[string]func(string) string{
		"generated key": func(string) string { return "" },
		"FERNET_KEY":    func(k string) string { return map[string]string{"FERNET_KEY": key}[k] },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			require.NoError(t, run(t.Context(), nil, getenv, &out))
			assert.Equal(t, "eligibility PROC003: eligible=true coverage=100% prior_authorization=true\n"+
				"prescription 6809: valid=true interactions_checked=true\n"+
				"prescription 11289: refused (unprocessable): Prescription validation failed: Drug interaction detected with ibuprofen\n"+
				"eligibility PROC999: not_found: Procedure code PROC999 not found\n", out.String())
		})
	}
}

func TestEmbeddedFailures(t *testing.T) {
	t.Parallel()
	err := run(t.Context(), []string{"extra"}, func(string) string { return "" }, &bytes.Buffer{})
	require.ErrorContains(t, err, "unexpected arguments")
	err = run(t.Context(), nil, func(string) string { return "not-a-key" }, &bytes.Buffer{})
	require.ErrorContains(t, err, "FERNET_KEY")
	assert.NotContains(t, err.Error(), "not-a-key")
}

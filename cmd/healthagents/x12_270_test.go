package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestX12Inquire: the command posts standard input as application/edi-x12
// with the key, and prints the answer, also the X12 of a refusal. (The
// real route and SDK are tested end to end in package server,
// TestX12RoundTrip; this stand-in checks the command's plumbing.)
func TestX12Inquire(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/api/v1/eligibility/x12" || r.Header.Get("Content-Type") != "application/edi-x12" ||
			r.Header.Get("Authorization") != "Bearer sk_dev_x" || string(body) != "ISA*270..." {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/edi-x12")
		w.WriteHeader(status)
		_, _ = w.Write([]byte("ISA*271..."))
	}))
	t.Cleanup(srv.Close)
	env := func(k string) string { return map[string]string{"HEALTHAGENTS_URL": srv.URL}[k] }
	var out, errb bytes.Buffer
	if err := x12Inquire(t.Context(), []string{"--api-key", "sk_dev_x"}, env, strings.NewReader("ISA*270..."), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "ISA*271..." {
		t.Fatalf("stdout %q", out.String())
	}
	status = http.StatusServiceUnavailable
	out.Reset()
	err := x12Inquire(t.Context(), []string{"--api-key", "sk_dev_x", "--timeout", "1s"}, env, strings.NewReader("ISA*270..."), &out, &errb)
	if err == nil || out.String() != "ISA*271..." {
		t.Fatalf("a 503: err %v, stdout %q", err, out.String())
	}
	for _, args := range [][]string{{}, {"--api-key", "k", "extra"}} {
		if err := x12Inquire(t.Context(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errb); err == nil {
			t.Fatalf("%v: no error", args)
		}
	}
}

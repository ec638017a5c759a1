package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/server"
)

// server.New returns the whole API as an http.Handler; it opens no
// listener. Deps.Service is the only required part: without Keys every
// caller is public, without V1 the /api/v1 routes answer 503. Package app
// assembles every part (database, keys, limits, proofs on chain) from the
// environment, as `healthagents serve` runs it.
func ExampleNew() {
	key, _ := cipher.GenerateKey()
	kr, _ := cipher.ParseKeyring(key)
	svc, err := healthagents.New(kr)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := server.New(server.Deps{Service: svc})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/health")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var health healthagents.Health
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode, health.Status)
	// Output: 200 healthy
}

// Mounted under a prefix in a program's own mux, the API, its /docs and
// /redoc pages and its OpenAPI document all work there: the pages load
// their assets relative to themselves, and the document's servers entry
// names the prefix it was reached under.
func ExampleNew_mounted() {
	key, _ := cipher.GenerateKey()
	kr, _ := cipher.ParseKeyring(key)
	svc, err := healthagents.New(kr)
	if err != nil {
		fmt.Println(err)
		return
	}
	api, err := server.New(server.Deps{Service: svc})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/healthagents/", http.StripPrefix("/healthagents", api))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, path := range []string{"/healthagents/health", "/healthagents/docs", "/healthagents/docs/swagger-ui-bundle.js", "/healthagents/redoc"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(path, resp.StatusCode)
	}
	resp, err := http.Get(srv.URL + "/healthagents/openapi.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var doc struct{ Servers []struct{ URL string } }
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("servers:", strings.Replace(doc.Servers[0].URL, srv.URL, "http://<host>", 1))
	// Output:
	// /healthagents/health 200
	// /healthagents/docs 200
	// /healthagents/docs/swagger-ui-bundle.js 200
	// /healthagents/redoc 200
	// servers: http://<host>/healthagents
}

package server

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/internal/openapi"
)

// buildDocument builds the OpenAPI 3.1 document of the routes.
func buildDocument(routes []route) ([]byte, error) {
	doc := openapi.New(openapi.Info{
		Title:   "healthagents",
		Version: healthagents.Version,
		Description: "Insurance eligibility, prescription validation and federated learning on encrypted patient data, " +
			"with zero-knowledge proofs verified on a blockchain. Every error body is {\"detail\": \"...\"}.",
		// GET /openapi.json replaces this with the URL it was reached at
		// (servedAt); server.OpenAPI keeps it.
		Servers:   []openapi.Server{{URL: "http://localhost:8000", Description: "development"}},
		ErrorBody: ErrorBody{},
	})
	// A revocation nonce reads from a JSON number or a decimal string and
	// writes as a string (api.Nonce): exact up to 2^64-1.
	doc.DefineType(api.Nonce(0), openapi.Schema{Type: openapi.Types{"integer", "string"}, Pattern: "^[0-9]{1,20}$", Minimum: ptrFloat(0),
		Description: "An unsigned 64-bit integer, 0 to 18446744073709551615: a JSON number or a decimal string when sent, a decimal string when answered."})
	for _, rt := range routes {
		if rt.Hidden {
			continue
		}
		op := rt.Doc
		op.Method, op.Path = rt.Method, rt.Path
		if err := doc.Add(op); err != nil {
			return nil, fmt.Errorf("server: documenting %s %s: %w", rt.Method, rt.Path, err)
		}
	}
	for _, ex := range bodyExamples() {
		if err := doc.Example(ex); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(webhookDocs())) {
		if err := doc.AddWebhook(name, webhookDocs()[name]); err != nil {
			return nil, fmt.Errorf("server: documenting webhook %s: %w", name, err)
		}
	}
	return doc.JSON()
}

// docRoutes serves the OpenAPI document of routes and the two documentation
// pages, whose assets are embedded (no CDN).
func (s *srv) docRoutes(routes []route) ([]route, error) {
	spec, err := documentOnce(routes)
	if err != nil {
		return nil, err
	}
	swagger, err := openapi.SwaggerUI("/openapi.json", openapi.WithTitle("healthagents API"))
	if err != nil {
		return nil, err
	}
	redoc, err := openapi.Redoc("/openapi.json", openapi.WithTitle("healthagents API"))
	if err != nil {
		return nil, err
	}
	specHandler := openapi.SpecHandlerFor(spec, s.servedAt)
	return []route{
		{Method: "GET", Path: "/openapi.json", Handler: specHandler, Hidden: true},
		{Method: "GET", Path: "/docs", Handler: swagger, Hidden: true},
		{Method: "GET", Path: "/docs/", Handler: swagger, Hidden: true},
		{Method: "GET", Path: "/redoc", Handler: redoc, Hidden: true},
		{Method: "GET", Path: "/redoc/", Handler: redoc, Hidden: true},
	}, nil
}

// documents holds the OpenAPI documents built in this process, by the
// routes they document (documentKey): every handler of a process documents
// the same routes, so the document is built once (tens of milliseconds
// each time otherwise; tests open dozens of handlers).
var documents sync.Map

// documentKey names the document of routes: the method and path of each
// documented route. The documentation of a route is a literal of the code
// (no route's Doc depends on the server's options, which is what lets
// server.OpenAPI() build the served document from a zero srv, as
// TestOpenAPIGolden checks), so routes with the same methods and paths have
// the same document.
func documentKey(routes []route) string {
	var b strings.Builder
	for _, rt := range routes {
		if !rt.Hidden {
			b.WriteString(rt.Method)
			b.WriteByte(' ')
			b.WriteString(rt.Path)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// documentOnce is buildDocument, once per process for a set of routes.
// Callers must not modify the returned bytes.
func documentOnce(routes []route) ([]byte, error) {
	key := documentKey(routes)
	if spec, ok := documents.Load(key); ok {
		return spec.([]byte), nil
	}
	spec, err := buildDocument(routes)
	if err != nil {
		return nil, err
	}
	stored, _ := documents.LoadOrStore(key, spec)
	return stored.([]byte), nil
}

// OpenAPI returns the OpenAPI document the handler serves at /openapi.json.
func OpenAPI() ([]byte, error) {
	s := &srv{}
	rs, err := s.routeTable()
	if err != nil {
		return nil, err
	}
	return buildDocument(rs)
}

// servedAt is the servers list of the document served to r: the scheme,
// host and path prefix r reached this handler at. The prefix is what a
// host program's http.StripPrefix removed (the request URI's path minus
// r.URL.Path), after X-Forwarded-Prefix when a trusted proxy stripped one
// too; X-Forwarded-Proto and X-Forwarded-Host are believed only from
// TRUSTED_PROXIES, like X-Forwarded-For. Nil (the document's own) when
// any part is malformed.
func (s *srv) servedAt(r *http.Request) []openapi.Server {
	scheme, host, prefix := "http", r.Host, mountPrefix(r)
	if r.TLS != nil {
		scheme = "https"
	}
	if s.trusted(peerOf(r)) {
		if p := lastValue(r.Header.Values("X-Forwarded-Proto")); p != "" {
			scheme = strings.ToLower(p)
		}
		if h := lastValue(r.Header.Values("X-Forwarded-Host")); h != "" {
			host = h
		}
		if p := lastValue(r.Header.Values("X-Forwarded-Prefix")); p != "" {
			prefix = "/" + strings.Trim(p, "/") + prefix
		}
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if (scheme != "http" && scheme != "https") || !hostPattern.MatchString(host) || !prefixPattern.MatchString(prefix) {
		return nil
	}
	return []openapi.Server{{URL: scheme + "://" + host + prefix, Description: "this server, as this document was reached"}}
}

var (
	hostPattern   = regexp.MustCompile(`^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)
	prefixPattern = regexp.MustCompile(`^(?:/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$`)
)

// mountPrefix is the path prefix an enclosing handler (http.StripPrefix)
// removed before r reached us: the request URI's path less r.URL.Path.
func mountPrefix(r *http.Request) string {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		return ""
	}
	full, path := u.EscapedPath(), r.URL.EscapedPath()
	if path == "" || !strings.HasSuffix(full, path) {
		return ""
	}
	return strings.TrimSuffix(full, path)
}

// peerOf is the TCP peer's address.
func peerOf(r *http.Request) netip.Addr {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}

package server

import (
	"fmt"
	"maps"
	"slices"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/internal/openapi"
)

// buildDocument builds the OpenAPI 3.1 document of the routes.
func buildDocument(routes []route) ([]byte, error) {
	doc := openapi.New(openapi.Info{
		Title:   "healthagents",
		Version: healthagents.Version,
		Description: "Insurance eligibility, prescription validation and federated learning on encrypted patient data, " +
			"with zero-knowledge proofs verified on a blockchain. Every error body is {\"detail\": \"...\"}.",
		Servers:   []openapi.Server{{URL: "http://localhost:8000", Description: "development"}},
		ErrorBody: ErrorBody{},
	})
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
	spec, err := buildDocument(routes)
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
	specHandler := openapi.SpecHandler(spec)
	return []route{
		{Method: "GET", Path: "/openapi.json", Handler: specHandler, Hidden: true},
		{Method: "GET", Path: "/docs", Handler: swagger, Hidden: true},
		{Method: "GET", Path: "/docs/", Handler: swagger, Hidden: true},
		{Method: "GET", Path: "/redoc", Handler: redoc, Hidden: true},
		{Method: "GET", Path: "/redoc/", Handler: redoc, Hidden: true},
	}, nil
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

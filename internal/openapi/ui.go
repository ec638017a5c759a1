package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	redoc "github.com/mvrilo/go-redoc"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
)

// UIOption configures [SwaggerUI] and [Redoc].
type UIOption func(*uiOptions) error

type uiOptions struct {
	title    string
	basePath string
}

// WithTitle sets the page title (default "API reference").
func WithTitle(title string) UIOption {
	return func(o *uiOptions) error {
		o.title = title
		return nil
	}
}

// WithBasePath sets the path the page is served at; its assets are served
// below it. Defaults: "/docs" for Swagger UI, "/redoc" for Redoc.
func WithBasePath(p string) UIOption {
	return func(o *uiOptions) error {
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, " \t?#\"'<>") {
			return fmt.Errorf("openapi: base path %q must be an absolute URL path", p)
		}
		o.basePath = strings.TrimSuffix(p, "/")
		return nil
	}
}

func uiConfig(specURL, defaultBase string, opts []UIOption) (uiOptions, error) {
	o := uiOptions{title: "API reference", basePath: defaultBase}
	if specURL == "" || strings.ContainsAny(specURL, " \t\"'<>") {
		return o, fmt.Errorf("openapi: bad spec URL %q", specURL)
	}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if o.basePath == "" {
		return o, errors.New("openapi: base path must not be the root")
	}
	return o, nil
}

// SwaggerUI returns a handler for the Swagger UI explorer of the document
// at specURL, with its assets embedded (github.com/swaggest/swgui v5, no
// CDN). Mount it at both the base path and below it:
//
//	mux.Handle("GET /docs", h)
//	mux.Handle("GET /docs/", h)
func SwaggerUI(specURL string, opts ...UIOption) (http.Handler, error) {
	o, err := uiConfig(specURL, "/docs", opts)
	if err != nil {
		return nil, err
	}
	h := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       o.title,
		SwaggerJSON: specURL,
		BasePath:    o.basePath + "/",
		// Try-it-out curl snippets stay; the validator badge (which calls an
		// outside service) is already off in swgui's defaults.
		SettingsUI: map[string]string{"defaultModelsExpandDepth": "1"},
	})
	return h, nil
}

// redocScript is the file name the Redoc page loads its script from.
const redocScript = "redoc.standalone.js"

var redocPage = template.Must(template.New("redoc").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>body{margin:0;padding:0}</style>
</head>
<body>
<redoc spec-url="{{.SpecURL}}"></redoc>
<script src="{{.Script}}"></script>
</body>
</html>
`))

// Redoc returns a handler for the Redoc reference page of the document at
// specURL. The page is ours (go-redoc's own page inlines the 1 MB script
// and its handler needs the spec as a file); the script is the
// redoc.standalone.js that github.com/mvrilo/go-redoc embeds, served below
// the base path. Nothing is loaded from elsewhere. Mount it at both the
// base path and below it:
//
//	mux.Handle("GET /redoc", h)
//	mux.Handle("GET /redoc/", h)
func Redoc(specURL string, opts ...UIOption) (http.Handler, error) {
	o, err := uiConfig(specURL, "/redoc", opts)
	if err != nil {
		return nil, err
	}
	var page bytes.Buffer
	err = redocPage.Execute(&page, struct{ Title, SpecURL, Script string }{
		Title: o.title, SpecURL: specURL, Script: o.basePath + "/" + redocScript,
	})
	if err != nil {
		return nil, fmt.Errorf("openapi: redoc page: %w", err)
	}
	return &redocHandler{
		base:   o.basePath,
		page:   newAsset("text/html; charset=utf-8", page.Bytes),
		script: newAsset("text/javascript; charset=utf-8", func() []byte { return []byte(redoc.JavaScript) }),
	}, nil
}

type redocHandler struct {
	base         string
	page, script *asset
}

func (h *redocHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case h.base, h.base + "/":
		h.page.ServeHTTP(w, r)
	case h.base + "/" + redocScript:
		h.script.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// SpecHandler serves a document produced by [Document.JSON] as
// application/json, with an ETag and gzip when the client accepts it.
func SpecHandler(spec []byte) http.Handler {
	b := bytes.Clone(spec)
	return newAsset("application/json", func() []byte { return b })
}

// asset is one in-memory file: ETag, conditional requests, and a gzip
// copy. The body, its hash and the gzip copy are made on first request, so
// building a handler costs nothing (Redoc's script is 1 MB).
type asset struct {
	contentType string
	load        func() []byte

	once           sync.Once
	body, gz       []byte
	etag, gzipEtag string
}

func newAsset(contentType string, load func() []byte) *asset {
	return &asset{contentType: contentType, load: load}
}

func (a *asset) prepare() {
	a.once.Do(func() {
		a.body = a.load()
		sum := sha256.Sum256(a.body)
		tag := hex.EncodeToString(sum[:12])
		a.etag, a.gzipEtag = `"`+tag+`"`, `"`+tag+`-gz"`
		if len(a.body) < 1024 {
			return
		}
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			return
		}
		if _, err := zw.Write(a.body); err != nil {
			return
		}
		if err := zw.Close(); err != nil {
			return
		}
		a.gz = b.Bytes()
	})
}

func (a *asset) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.prepare()
	hdr := w.Header()
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Add("Vary", "Accept-Encoding")
	body, etag := a.body, a.etag
	if a.gz != nil && acceptsGzip(r) {
		hdr.Set("Content-Encoding", "gzip")
		body, etag = a.gz, a.gzipEtag
	}
	hdr.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

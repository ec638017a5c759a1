package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
// CDN). The page is ours: it names its assets and the document by URLs
// relative to the page, so it works wherever the handler is mounted (under
// http.StripPrefix, behind a proxy that strips a prefix). Mount it at both
// the base path and below it:
//
//	mux.Handle("GET /docs", h)
//	mux.Handle("GET /docs/", h)
func SwaggerUI(specURL string, opts ...UIOption) (http.Handler, error) {
	o, err := uiConfig(specURL, "/docs", opts)
	if err != nil {
		return nil, err
	}
	// swgui serves the embedded assets below the base path; its own page,
	// which names them by absolute paths, is never served.
	assets := v5emb.NewHandlerWithConfig(swgui.Config{Title: o.title, SwaggerJSON: specURL, BasePath: o.basePath + "/"})
	h := &uiHandler{base: o.basePath, assets: assets}
	for i, page := range []string{o.basePath, o.basePath + "/"} {
		var b bytes.Buffer
		cfg, err := json.Marshal(map[string]string{"swaggerJsonUrl": relativeRef(page, specURL)})
		if err != nil {
			return nil, fmt.Errorf("openapi: swagger page: %w", err)
		}
		err = swaggerPage.Execute(&b, struct {
			Title, Assets string
			Config        template.JS
		}{o.title, relativeRef(page, o.basePath+"/"), template.JS(cfg)}) //nolint:gosec // JSON of two strings
		if err != nil {
			return nil, fmt.Errorf("openapi: swagger page: %w", err)
		}
		h.pages[i] = newAsset("text/html; charset=utf-8", b.Bytes)
	}
	return h, nil
}

var swaggerPage = template.Must(template.New("swagger").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<link rel="stylesheet" type="text/css" href="{{.Assets}}swagger-ui.css">
<link rel="icon" type="image/png" href="{{.Assets}}favicon-32x32.png" sizes="32x32">
<style>html{box-sizing:border-box;overflow-y:scroll}*,*:before,*:after{box-sizing:inherit}body{margin:0;background:#fafafa}</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="{{.Assets}}swagger-ui-bundle.js"></script>
<script src="{{.Assets}}swagger-ui-standalone-preset.js"></script>
<script>
window.onload = function () {
  var cfg = {{.Config}};
  window.ui = SwaggerUIBundle({
    url: new URL(cfg.swaggerJsonUrl, window.location.href).href,
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
    validatorUrl: null,
    defaultModelsExpandDepth: 1
  });
};
</script>
</body>
</html>
`))

// uiHandler serves a documentation page at base and base+"/" (one
// rendering each, since their relative URLs differ) and passes anything
// else below base to assets.
type uiHandler struct {
	base   string
	pages  [2]*asset
	assets http.Handler
}

func (h *uiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case h.base:
		h.pages[0].ServeHTTP(w, r)
	case h.base + "/":
		h.pages[1].ServeHTTP(w, r)
	default:
		if !strings.HasPrefix(r.URL.Path, h.base+"/") {
			http.NotFound(w, r)
			return
		}
		h.assets.ServeHTTP(w, r)
	}
}

// relativeRef returns the reference to the absolute path target from a
// page at the absolute path page, relative to the page's directory, so a
// browser resolves it under whatever prefix the page was reached at:
// from "/docs", "/openapi.json" is "openapi.json" and "/docs/" is "docs/";
// from "/docs/", they are "../openapi.json" and "./".
func relativeRef(page, target string) string {
	dir := strings.Split(page[:strings.LastIndex(page, "/")+1], "/")
	dir = dir[1 : len(dir)-1] // the page's directory, by segment
	to := strings.Split(target, "/")[1:]
	common := 0
	for common < len(dir) && common < len(to)-1 && dir[common] == to[common] {
		common++
	}
	ref := strings.Repeat("../", len(dir)-common) + strings.Join(to[common:], "/")
	if ref == "" || strings.HasPrefix(ref, "/") {
		ref = "./" + ref
	} else if first, _, _ := strings.Cut(ref, "/"); strings.Contains(first, ":") {
		ref = "./" + ref // "a:b" would read as a scheme
	}
	return ref
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
<div id="redoc"></div>
<script src="{{.Script}}"></script>
<script>
Redoc.init(new URL({{.SpecURL}}, window.location.href).href, {}, document.getElementById("redoc"));
</script>
</body>
</html>
`))

// Redoc returns a handler for the Redoc reference page of the document at
// specURL. The page is ours (go-redoc's own page inlines the 1 MB script
// and its handler needs the spec as a file); the script is the
// redoc.standalone.js that github.com/mvrilo/go-redoc embeds, served below
// the base path. Nothing is loaded from elsewhere, and the page names the
// script and the document by relative URLs, so it works under any mount
// prefix. Mount it at both the base path and below it:
//
//	mux.Handle("GET /redoc", h)
//	mux.Handle("GET /redoc/", h)
func Redoc(specURL string, opts ...UIOption) (http.Handler, error) {
	o, err := uiConfig(specURL, "/redoc", opts)
	if err != nil {
		return nil, err
	}
	script := newAsset("text/javascript; charset=utf-8", func() []byte { return []byte(redoc.JavaScript) })
	scriptPath := o.basePath + "/" + redocScript
	h := &uiHandler{base: o.basePath, assets: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != scriptPath {
			http.NotFound(w, r)
			return
		}
		script.ServeHTTP(w, r)
	})}
	for i, page := range []string{o.basePath, o.basePath + "/"} {
		var b bytes.Buffer
		err = redocPage.Execute(&b, struct{ Title, SpecURL, Script string }{
			Title: o.title, SpecURL: relativeRef(page, specURL), Script: relativeRef(page, o.basePath+"/"+redocScript),
		})
		if err != nil {
			return nil, fmt.Errorf("openapi: redoc page: %w", err)
		}
		h.pages[i] = newAsset("text/html; charset=utf-8", b.Bytes)
	}
	return h, nil
}

// SpecHandler serves a document produced by [Document.JSON] as
// application/json, with an ETag and gzip when the client accepts it.
func SpecHandler(spec []byte) http.Handler {
	b := bytes.Clone(spec)
	return newAsset("application/json", func() []byte { return b })
}

// SpecHandlerFor serves a document produced by [Document.JSON] as
// [SpecHandler] does, with its top-level servers list replaced by what
// servers returns for each request (nil or empty: the document's own), so
// the document names the host and prefix its reader reached it at. The
// last few distinct renderings are kept, each with its ETag and gzip copy.
func SpecHandlerFor(spec []byte, servers func(*http.Request) []Server) http.Handler {
	return &serversSpec{spec: bytes.Clone(spec), servers: servers, plain: SpecHandler(spec), cache: map[string]*asset{}}
}

// maxSpecRenderings bounds the renderings SpecHandlerFor keeps: a caller
// choosing Host headers cannot grow it.
const maxSpecRenderings = 16

type serversSpec struct {
	spec    []byte
	servers func(*http.Request) []Server
	plain   http.Handler

	mu    sync.Mutex
	cache map[string]*asset
}

func (h *serversSpec) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	list := h.servers(r)
	if len(list) == 0 {
		h.plain.ServeHTTP(w, r)
		return
	}
	key, err := json.Marshal(list)
	if err != nil {
		h.plain.ServeHTTP(w, r)
		return
	}
	h.mu.Lock()
	a := h.cache[string(key)]
	if a == nil {
		body, err := WithServers(h.spec, list)
		if err != nil {
			h.mu.Unlock()
			h.plain.ServeHTTP(w, r)
			return
		}
		if len(h.cache) >= maxSpecRenderings {
			clear(h.cache)
		}
		a = newAsset("application/json", func() []byte { return body })
		h.cache[string(key)] = a
	}
	h.mu.Unlock()
	a.ServeHTTP(w, r)
}

// WithServers returns spec, a document produced by [Document.JSON], with
// its top-level "servers" list replaced by servers; everything else is
// byte for byte the same. It fails if spec is not a JSON object or has no
// servers list.
func WithServers(spec []byte, servers []Server) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(spec))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("openapi: the document is not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("openapi: reading the document: %w", err)
		}
		start := dec.InputOffset()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("openapi: reading the document: %w", err)
		}
		if t != "servers" {
			continue
		}
		end := dec.InputOffset()
		list, err := json.MarshalIndent(servers, "  ", "  ")
		if err != nil {
			return nil, fmt.Errorf("openapi: servers: %w", err)
		}
		out := make([]byte, 0, len(spec)+len(list))
		out = append(out, spec[:start]...)
		out = append(out, ": "...)
		out = append(out, list...)
		return append(out, spec[end:]...), nil
	}
	return nil, errors.New("openapi: the document has no servers list")
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

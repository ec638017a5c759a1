package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Version is the OpenAPI version of every document this package writes.
const Version = "3.1.0"

// BearerScheme is the name of the one security scheme: HTTP bearer.
const BearerScheme = "bearerAuth"

// Rate-limit headers, as the spec names them.
const (
	HeaderRateLimitLimit     = "X-RateLimit-Limit"
	HeaderRateLimitRemaining = "X-RateLimit-Remaining"
	HeaderRateLimitReset     = "X-RateLimit-Reset"
	HeaderRetryAfter         = "Retry-After"
)

// Info is the document's info object and servers.
type Info struct {
	Title, Version, Description string
	Servers                     []Server
	// Tags describe the operation tags, in the order listed.
	Tags []Tag
	// ErrorBody is a zero value of the type every error response carries
	// (nil: this package's [ErrorBody]).
	ErrorBody any
}

// Tag describes a group of operations.
type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Server is one entry of the document's servers list.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// ErrorBody is the default error body: {"detail": "..."} and nothing else.
type ErrorBody struct {
	Detail string `json:"detail" doc:"What went wrong, for a human."`
}

// Auth says whether an operation takes the bearer API key.
type Auth int

const (
	// AuthNone: the operation takes no credential.
	AuthNone Auth = iota
	// AuthOptional: anonymous calls are served, a bearer key may be sent.
	AuthOptional
	// AuthRequired: a bearer key is required.
	AuthRequired
)

// Param is a path or query parameter. Its schema is Schema when set, else
// SchemaOf(Value), else a string.
type Param struct {
	Name, Description string
	Required          bool // path parameters are always required
	Value             any
	Schema            *Schema
	Example           any
}

// Header is a response header. Its schema is Schema when set, else
// SchemaOf(Value), else a string.
type Header struct {
	Description string
	Value       any
	Schema      *Schema
}

// Response is one response of an operation.
type Response struct {
	Description string
	Body        any // zero value of the JSON body's type, or nil for none
	Headers     map[string]Header
	// Alternates are other media types of the same response, chosen by the
	// request's Accept header (e.g. application/fhir+json), each with its
	// schema as given.
	Alternates map[string]*Schema
}

// Operation describes one HTTP operation; Add validates and records it.
type Operation struct {
	// Method is an HTTP method; Path a Go 1.22 ServeMux path such as
	// "/api/keys/{key_id}" ("{$}" is dropped, "{name...}" becomes "{name}").
	Method, Path                      string
	OperationID, Summary, Description string
	Tags                              []string
	Deprecated                        bool

	// Request is a zero value of the JSON request body's type, or nil.
	Request any
	// RequestMedia are request bodies of other media types
	// (application/edi-x12, multipart/form-data...), each with its schema
	// as given: alternatives to Request's JSON, or the only bodies.
	RequestMedia map[string]*Schema
	// Responses by status. Errors adds an error-body response for each
	// listed status not already in Responses, described as the spec does.
	Responses map[int]Response
	Errors    []int
	// RateLimited adds the X-RateLimit-* headers to every response.
	RateLimited bool

	Auth        Auth
	PathParams  []Param
	QueryParams []Param
}

// Document builds an OpenAPI 3.1 document. Its zero value is not usable;
// call [New]. It is not safe for concurrent use.
type Document struct {
	info     Info
	reg      *registry
	defined  map[reflect.Type]*Schema
	paths    map[string]map[string]*operation
	webhooks map[string]map[string]*operation
	ids      map[string]bool
	examples map[reflect.Type]example // examples.go
}

// New returns an empty document.
func New(info Info) *Document {
	defined := map[reflect.Type]*Schema{}
	return &Document{
		info:     info,
		defined:  defined,
		reg:      newRegistry(defined),
		paths:    map[string]map[string]*operation{},
		webhooks: map[string]map[string]*operation{},
		ids:      map[string]bool{},
	}
}

// DefineType fixes the schema of v's type wherever it appears, for types
// whose JSON reflection cannot see (a custom json.Marshaler). Call it
// before the first Add that reaches the type.
func (d *Document) DefineType(v any, s Schema) {
	d.defined[reflect.TypeOf(v)] = cloneSchema(&s)
}

// The JSON shapes of the document's objects; fields marshal in order and
// maps with sorted keys, so the output is byte-for-byte stable.
type (
	operation struct {
		Tags        []string              `json:"tags,omitempty"`
		Summary     string                `json:"summary,omitempty"`
		Description string                `json:"description,omitempty"`
		OperationID string                `json:"operationId,omitempty"`
		Parameters  []*parameter          `json:"parameters,omitempty"`
		RequestBody *requestBody          `json:"requestBody,omitempty"`
		Responses   map[string]*response  `json:"responses"`
		Deprecated  bool                  `json:"deprecated,omitempty"`
		Security    []map[string][]string `json:"security,omitempty"`
	}
	parameter struct {
		Name        string  `json:"name"`
		In          string  `json:"in"`
		Description string  `json:"description,omitempty"`
		Required    bool    `json:"required,omitempty"`
		Schema      *Schema `json:"schema"`
		Example     any     `json:"example,omitempty"`
	}
	requestBody struct {
		Description string                `json:"description,omitempty"`
		Required    bool                  `json:"required"`
		Content     map[string]*mediaType `json:"content"`
	}
	mediaType struct {
		Schema *Schema `json:"schema"`
	}
	response struct {
		Description string                `json:"description"`
		Headers     map[string]*header    `json:"headers,omitempty"`
		Content     map[string]*mediaType `json:"content,omitempty"`
	}
	header struct {
		Ref         string  `json:"$ref,omitempty"`
		Description string  `json:"description,omitempty"`
		Schema      *Schema `json:"schema,omitempty"`
	}
	securityScheme struct {
		Type         string `json:"type"`
		Scheme       string `json:"scheme"`
		BearerFormat string `json:"bearerFormat,omitempty"`
		Description  string `json:"description,omitempty"`
	}
	components struct {
		Schemas         map[string]*Schema         `json:"schemas,omitempty"`
		Headers         map[string]*header         `json:"headers,omitempty"`
		SecuritySchemes map[string]*securityScheme `json:"securitySchemes"`
	}
	info struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description,omitempty"`
	}
	document struct {
		OpenAPI    string                           `json:"openapi"`
		Info       info                             `json:"info"`
		Servers    []Server                         `json:"servers,omitempty"`
		Tags       []Tag                            `json:"tags,omitempty"`
		Paths      map[string]map[string]*operation `json:"paths"`
		Webhooks   map[string]map[string]*operation `json:"webhooks,omitempty"`
		Components components                       `json:"components"`
	}
)

var (
	pathWildcard = regexp.MustCompile(`\{([^{}]*)\}`)
	paramName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	methods      = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}
)

// Add records op under its path and method. It fails, wrapping
// ErrInvalidOperation, on a malformed path or method, a second operation
// with the same method and path or the same operation ID, a path
// parameter declared but absent from the path, or a status outside
// 100-599; and with ErrUnsupportedType or ErrBadTag when a body or
// parameter type has no schema. On failure the document is unchanged.
func (d *Document) Add(op Operation) error {
	path, names, err := openAPIPath(op.Path)
	if err != nil {
		return err
	}
	method := strings.ToLower(op.Method)
	if !slices.Contains(methods, method) {
		return fmt.Errorf("%w: method %q", ErrInvalidOperation, op.Method)
	}
	if d.paths[path][method] != nil {
		return fmt.Errorf("%w: %s %s declared twice", ErrInvalidOperation, op.Method, path)
	}
	o, err := d.build(op, names)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op.Method, op.Path, err)
	}
	if d.paths[path] == nil {
		d.paths[path] = map[string]*operation{}
	}
	d.paths[path][method] = o
	if op.OperationID != "" {
		d.ids[op.OperationID] = true
	}
	return nil
}

// AddWebhook records op as the webhook name (OpenAPI 3.1 "webhooks"): a
// request this service sends to a subscriber. op.Path is ignored; Method
// defaults to POST.
func (d *Document) AddWebhook(name string, op Operation) error {
	if name == "" {
		return fmt.Errorf("%w: webhook without a name", ErrInvalidOperation)
	}
	if op.Method == "" {
		op.Method = http.MethodPost
	}
	method := strings.ToLower(op.Method)
	if !slices.Contains(methods, method) {
		return fmt.Errorf("%w: method %q", ErrInvalidOperation, op.Method)
	}
	if d.webhooks[name][method] != nil {
		return fmt.Errorf("%w: webhook %s %s declared twice", ErrInvalidOperation, op.Method, name)
	}
	o, err := d.build(op, nil)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", name, err)
	}
	if d.webhooks[name] == nil {
		d.webhooks[name] = map[string]*operation{}
	}
	d.webhooks[name][method] = o
	if op.OperationID != "" {
		d.ids[op.OperationID] = true
	}
	return nil
}

// openAPIPath turns a ServeMux path into an OpenAPI path and its
// parameter names.
func openAPIPath(p string) (string, []string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", nil, fmt.Errorf("%w: path %q must start with /", ErrInvalidOperation, p)
	}
	if strings.ContainsAny(p, " \t") {
		return "", nil, fmt.Errorf("%w: path %q has a space (give the method in Method)", ErrInvalidOperation, p)
	}
	p = strings.TrimSuffix(p, "{$}")
	var names []string
	var bad error
	out := pathWildcard.ReplaceAllStringFunc(p, func(m string) string {
		n := strings.TrimSuffix(m[1:len(m)-1], "...")
		if !paramName.MatchString(n) {
			bad = fmt.Errorf("%w: path %q has bad wildcard %q", ErrInvalidOperation, p, m)
		}
		if slices.Contains(names, n) {
			bad = fmt.Errorf("%w: path %q repeats wildcard %q", ErrInvalidOperation, p, n)
		}
		names = append(names, n)
		return "{" + n + "}"
	})
	if bad != nil {
		return "", nil, bad
	}
	if strings.ContainsAny(pathWildcard.ReplaceAllString(out, ""), "{}") {
		return "", nil, fmt.Errorf("%w: path %q has unbalanced braces", ErrInvalidOperation, p)
	}
	return out, names, nil
}

// build turns op into its JSON shape. On failure it forgets the component
// schemas it registered, so a failed Add leaves the document unchanged.
func (d *Document) build(op Operation, pathNames []string) (o *operation, err error) {
	before := maps.Clone(d.reg.comps)
	defer func() {
		if err != nil {
			d.reg.comps = before
		}
	}()
	return d.buildOp(op, pathNames)
}

func (d *Document) buildOp(op Operation, pathNames []string) (*operation, error) {
	if op.OperationID != "" && d.ids[op.OperationID] {
		return nil, fmt.Errorf("%w: operationId %q used twice", ErrInvalidOperation, op.OperationID)
	}
	o := &operation{
		Tags:        slices.Clone(op.Tags),
		Summary:     op.Summary,
		Description: op.Description,
		OperationID: op.OperationID,
		Deprecated:  op.Deprecated,
		Responses:   map[string]*response{},
	}
	switch op.Auth {
	case AuthNone:
	case AuthOptional:
		o.Security = []map[string][]string{{}, {BearerScheme: {}}}
	case AuthRequired:
		o.Security = []map[string][]string{{BearerScheme: {}}}
	default:
		return nil, fmt.Errorf("%w: auth %d", ErrInvalidOperation, op.Auth)
	}

	declared := map[string]bool{}
	for _, p := range op.PathParams {
		if !slices.Contains(pathNames, p.Name) {
			return nil, fmt.Errorf("%w: path parameter %q is not in the path", ErrInvalidOperation, p.Name)
		}
		if declared[p.Name] {
			return nil, fmt.Errorf("%w: path parameter %q declared twice", ErrInvalidOperation, p.Name)
		}
		declared[p.Name] = true
		p.Required = true
		pp, err := d.param(p, "path")
		if err != nil {
			return nil, err
		}
		o.Parameters = append(o.Parameters, pp)
	}
	for _, n := range pathNames {
		if !declared[n] {
			o.Parameters = append(o.Parameters, &parameter{Name: n, In: "path", Required: true, Schema: &Schema{Type: Types{"string"}}})
		}
	}
	query := map[string]bool{}
	for _, p := range op.QueryParams {
		if p.Name == "" || query[p.Name] {
			return nil, fmt.Errorf("%w: query parameter %q empty or declared twice", ErrInvalidOperation, p.Name)
		}
		query[p.Name] = true
		pp, err := d.param(p, "query")
		if err != nil {
			return nil, err
		}
		o.Parameters = append(o.Parameters, pp)
	}

	if op.Request != nil {
		s, err := d.reg.schemaOf(op.Request)
		if err != nil {
			return nil, err
		}
		o.RequestBody = &requestBody{Required: true, Content: jsonContent(s)}
	}
	for media, s := range op.RequestMedia {
		if o.RequestBody == nil {
			o.RequestBody = &requestBody{Required: true, Content: map[string]*mediaType{}}
		}
		o.RequestBody.Content[media] = &mediaType{Schema: cloneSchema(s)}
	}

	responses := maps.Clone(op.Responses)
	if responses == nil {
		responses = map[int]Response{}
	}
	errBody := d.info.ErrorBody
	if errBody == nil {
		errBody = ErrorBody{}
	}
	for _, code := range op.Errors {
		if _, ok := responses[code]; ok {
			continue
		}
		r := Response{Description: errorDescription(code), Body: errBody}
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			r.Headers = map[string]Header{HeaderRetryAfter: {}}
		}
		responses[code] = r
	}
	if len(responses) == 0 {
		return nil, fmt.Errorf("%w: no responses", ErrInvalidOperation)
	}
	for code, r := range responses {
		if code < 100 || code > 599 {
			return nil, fmt.Errorf("%w: status %d", ErrInvalidOperation, code)
		}
		rr, err := d.response(r, op.RateLimited)
		if err != nil {
			return nil, fmt.Errorf("response %d: %w", code, err)
		}
		o.Responses[strconv.Itoa(code)] = rr
	}
	return o, nil
}

func jsonContent(s *Schema) map[string]*mediaType {
	return map[string]*mediaType{"application/json": {Schema: s}}
}

func (d *Document) param(p Param, in string) (*parameter, error) {
	if !paramName.MatchString(p.Name) {
		return nil, fmt.Errorf("%w: parameter name %q", ErrInvalidOperation, p.Name)
	}
	s, err := d.valueSchema(p.Schema, p.Value)
	if err != nil {
		return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
	}
	return &parameter{Name: p.Name, In: in, Description: p.Description, Required: p.Required, Schema: s, Example: p.Example}, nil
}

func (d *Document) valueSchema(s *Schema, v any) (*Schema, error) {
	switch {
	case s != nil:
		return cloneSchema(s), nil
	case v != nil:
		return d.reg.schemaOf(v)
	default:
		return &Schema{Type: Types{"string"}}, nil
	}
}

func (d *Document) response(r Response, rateLimited bool) (*response, error) {
	desc := r.Description
	if desc == "" {
		desc = "Response"
	}
	out := &response{Description: desc}
	if r.Body != nil {
		s, err := d.reg.schemaOf(r.Body)
		if err != nil {
			return nil, err
		}
		out.Content = jsonContent(s)
	}
	for media, s := range r.Alternates {
		if out.Content == nil {
			out.Content = map[string]*mediaType{}
		}
		out.Content[media] = &mediaType{Schema: cloneSchema(s)}
	}
	if rateLimited {
		out.Headers = map[string]*header{}
		for _, n := range []string{HeaderRateLimitLimit, HeaderRateLimitRemaining, HeaderRateLimitReset} {
			out.Headers[n] = &header{Ref: "#/components/headers/" + n}
		}
	}
	for name, h := range r.Headers {
		if out.Headers == nil {
			out.Headers = map[string]*header{}
		}
		if name == HeaderRetryAfter && h.Schema == nil && h.Value == nil && h.Description == "" {
			out.Headers[name] = &header{Ref: "#/components/headers/" + name}
			continue
		}
		s, err := d.valueSchema(h.Schema, h.Value)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", name, err)
		}
		out.Headers[name] = &header{Description: h.Description, Schema: s}
	}
	return out, nil
}

// JSON returns the document as indented JSON, ending in a newline. The
// same operations give the same bytes, whatever order they were added in
// (parameters keep their declared order).
func (d *Document) JSON() ([]byte, error) {
	names, schemas, err := d.reg.resolve()
	if err != nil {
		return nil, err
	}
	d.applyExamples(names, schemas)
	seen := map[*Schema]bool{}
	for _, ops := range []map[string]map[string]*operation{d.paths, d.webhooks} {
		for _, byMethod := range ops {
			for _, o := range byMethod {
				for _, p := range o.Parameters {
					setRefs(p.Schema, names, seen)
				}
				if o.RequestBody != nil {
					for _, m := range o.RequestBody.Content {
						setRefs(m.Schema, names, seen)
					}
				}
				for _, r := range o.Responses {
					for _, m := range r.Content {
						setRefs(m.Schema, names, seen)
					}
					for _, h := range r.Headers {
						setRefs(h.Schema, names, seen)
					}
				}
			}
		}
	}
	doc := document{
		OpenAPI: Version,
		Info:    info{Title: d.info.Title, Version: d.info.Version, Description: d.info.Description},
		Servers: d.info.Servers,
		Paths:   d.paths,
		Tags:    d.info.Tags,
		Components: components{
			Schemas: schemas,
			Headers: map[string]*header{
				HeaderRateLimitLimit:     {Description: "Requests allowed in the current window.", Schema: &Schema{Type: Types{"integer"}, Format: "int64", Minimum: ptr(0.0)}},
				HeaderRateLimitRemaining: {Description: "Requests left in the current window.", Schema: &Schema{Type: Types{"integer"}, Format: "int64", Minimum: ptr(0.0)}},
				HeaderRateLimitReset:     {Description: "When the current window resets, in Unix epoch seconds.", Schema: &Schema{Type: Types{"integer"}, Format: "int64", Minimum: ptr(0.0)}},
				HeaderRetryAfter:         {Description: "Seconds to wait before retrying.", Schema: &Schema{Type: Types{"integer"}, Minimum: ptr(0.0)}},
			},
			SecuritySchemes: map[string]*securityScheme{
				BearerScheme: {Type: "http", Scheme: "bearer", BearerFormat: "API key", Description: "An API key (sk_dev_… or sk_live_…) sent as `Authorization: Bearer <API_KEY>`."},
			},
		},
	}
	if len(d.webhooks) > 0 {
		doc.Webhooks = d.webhooks
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return buf.Bytes(), nil
}

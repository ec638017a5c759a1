package openapi

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Errors returned while building schemas and documents. Every error the
// package returns wraps one of these, so errors.Is works.
var (
	// ErrUnsupportedType: a Go type has no JSON Schema (chan, func,
	// complex, a custom json.Marshaler without a [Document.DefineType]).
	ErrUnsupportedType = errors.New("openapi: unsupported type")
	// ErrBadTag: a struct tag that drives the schema cannot be parsed.
	ErrBadTag = errors.New("openapi: bad struct tag")
	// ErrNameCollision: two Go types would get the same component name.
	ErrNameCollision = errors.New("openapi: component name collision")
	// ErrInvalidOperation: an operation is malformed or declared twice.
	ErrInvalidOperation = errors.New("openapi: invalid operation")
)

// Schema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) in
// the subset this package generates. The zero Schema is the empty schema,
// which every JSON value satisfies. Fields marshal in declaration order.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Description          string             `json:"description,omitempty"`
	Type                 Types              `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	ContentEncoding      string             `json:"contentEncoding,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	Default              any                `json:"default,omitempty"`
	Examples             []any              `json:"examples,omitempty"`

	// refType is the named struct type this schema points at; its Ref is
	// filled in when component names are known (see registry.resolve).
	refType reflect.Type
}

// Types is the JSON Schema "type" keyword: one name marshals as a string,
// several (e.g. ["string", "null"]) as an array.
type Types []string

// MarshalJSON implements json.Marshaler.
func (t Types) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// UnmarshalJSON implements json.Unmarshaler: it accepts a string or an
// array of strings.
func (t *Types) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = Types{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("openapi: type must be a string or an array of strings: %w", err)
	}
	*t = many
	return nil
}

// SchemaOf returns the JSON Schema of v's type, as encoding/json would
// marshal a value of it, and the component schemas it refers to, keyed by
// component name. A named struct type is always a component: for one, the
// returned schema is {"$ref": "#/components/schemas/<Name>"}.
//
// The rules (docs/decisions/openapi.md has the reasons):
//   - Properties come from json tags; "-" and unexported fields are skipped;
//     embedded structs without a json name are flattened, outer fields win.
//   - A property is required unless its tag has omitempty or omitzero; the
//     tag required:"true" or required:"false" overrides either way.
//   - A pointer is nullable (type [T, "null"]) unless omitempty/omitzero
//     drops it when nil; the tag nullable:"true" makes any field nullable.
//   - time.Time is a date-time string, []byte a base64 string, a map an
//     object with additionalProperties, an interface the empty schema, a
//     TextMarshaler a string; other json.Marshaler types are an error.
//   - Tags doc, enum (comma-separated), example, format, pattern, minimum,
//     maximum, minLength, maxLength, minItems, maxItems, default refine the
//     property's schema.
func SchemaOf(v any) (*Schema, map[string]*Schema, error) {
	r := newRegistry(nil)
	s, err := r.schemaOf(v)
	if err != nil {
		return nil, nil, err
	}
	names, comps, err := r.resolve()
	if err != nil {
		return nil, nil, err
	}
	setRefs(s, names, map[*Schema]bool{})
	return s, comps, nil
}

// registry collects the component schemas of named struct types.
type registry struct {
	comps   map[reflect.Type]*Schema
	defined map[reflect.Type]*Schema // DefineType overrides
}

func newRegistry(defined map[reflect.Type]*Schema) *registry {
	return &registry{comps: map[reflect.Type]*Schema{}, defined: defined}
}

// schemaOf returns the schema of v's type (nil v: nil schema).
func (r *registry) schemaOf(v any) (*Schema, error) {
	if v == nil {
		return nil, nil
	}
	return r.typeSchema(reflect.TypeOf(v))
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// typeSchema returns a fresh schema for t (a $ref for named structs).
func (r *registry) typeSchema(t reflect.Type) (*Schema, error) {
	if s, ok := r.defined[t]; ok {
		return cloneSchema(s), nil
	}
	switch t {
	case timeType:
		return &Schema{Type: Types{"string"}, Format: "date-time"}, nil
	case rawMessageType:
		return &Schema{}, nil
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		switch {
		case implements(t, jsonMarshalerType):
			return nil, fmt.Errorf("%w: %s implements json.Marshaler; describe it with Document.DefineType", ErrUnsupportedType, t)
		case implements(t, textMarshalerType):
			return &Schema{Type: Types{"string"}}, nil
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: Types{"boolean"}}, nil
	case reflect.String:
		return &Schema{Type: Types{"string"}}, nil
	case reflect.Int, reflect.Int64:
		return &Schema{Type: Types{"integer"}, Format: "int64"}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return &Schema{Type: Types{"integer"}, Format: "int32"}, nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: Types{"integer"}, Format: "int64", Minimum: ptr(0.0)}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &Schema{Type: Types{"integer"}, Format: "int32", Minimum: ptr(0.0)}, nil
	case reflect.Float32:
		return &Schema{Type: Types{"number"}, Format: "float"}, nil
	case reflect.Float64:
		return &Schema{Type: Types{"number"}, Format: "double"}, nil
	case reflect.Interface:
		return &Schema{}, nil
	case reflect.Pointer:
		return r.typeSchema(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), jsonMarshalerType) && !implements(t.Elem(), textMarshalerType) {
			return &Schema{Type: Types{"string"}, ContentEncoding: "base64"}, nil
		}
		items, err := r.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &Schema{Type: Types{"array"}, Items: items}, nil
	case reflect.Array:
		items, err := r.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		n := t.Len()
		return &Schema{Type: Types{"array"}, Items: items, MinItems: &n, MaxItems: &n}, nil
	case reflect.Map:
		k := t.Key()
		switch {
		case k.Kind() == reflect.String, implements(k, textMarshalerType):
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			return nil, fmt.Errorf("%w: map key type %s", ErrUnsupportedType, k)
		}
		vals, err := r.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &Schema{Type: Types{"object"}, AdditionalProperties: vals}, nil
	case reflect.Struct:
		if t.Name() == "" {
			return r.structSchema(t)
		}
		if _, ok := r.comps[t]; !ok {
			// Register before building, so recursive types end in a $ref.
			r.comps[t] = &Schema{}
			s, err := r.structSchema(t)
			if err != nil {
				delete(r.comps, t)
				return nil, err
			}
			*r.comps[t] = *s
		}
		return &Schema{refType: t}, nil
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, t)
	}
}

// field is one JSON property of a struct, after flattening.
type field struct {
	name   string
	depth  int
	schema *Schema
	req    bool
}

func (r *registry) structSchema(t reflect.Type) (*Schema, error) {
	fields, err := r.collectFields(t, 0, map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	s := &Schema{Type: Types{"object"}, Properties: map[string]*Schema{}}
	for _, f := range fields {
		s.Properties[f.name] = f.schema
		if f.req {
			s.Required = append(s.Required, f.name)
		}
	}
	slices.Sort(s.Required)
	return s, nil
}

// collectFields walks t's fields as encoding/json does: embedded structs
// without a json name are flattened; a shallower field hides a deeper one of
// the same name; two of the same name at the same depth are an error (where
// encoding/json would silently drop both).
func (r *registry) collectFields(t reflect.Type, depth int, seen map[reflect.Type]bool) ([]field, error) {
	if seen[t] {
		return nil, nil
	}
	seen[t] = true
	defer delete(seen, t)

	byName := map[string]int{}
	var out []field
	add := func(f field) error {
		if i, ok := byName[f.name]; ok {
			switch {
			case out[i].depth < f.depth:
				return nil
			case out[i].depth == f.depth:
				return fmt.Errorf("%w: %s has two fields named %q at the same depth", ErrBadTag, t, f.name)
			}
			out[i] = f
			return nil
		}
		byName[f.name] = len(out)
		out = append(out, f)
		return nil
	}

	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			viaPtr := et.Kind() == reflect.Pointer
			if viaPtr {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct && !implements(et, jsonMarshalerType) {
				inner, err := r.collectFields(et, depth+1, seen)
				if err != nil {
					return nil, err
				}
				for _, f := range inner {
					if viaPtr {
						f.req = false // a nil embedded pointer drops all its fields
					}
					if err := add(f); err != nil {
						return nil, err
					}
				}
				continue
			}
			if !sf.IsExported() {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f, err := r.fieldSchema(t, sf, name, opts)
		if err != nil {
			return nil, err
		}
		f.depth = depth
		if err := add(f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func (r *registry) fieldSchema(owner reflect.Type, sf reflect.StructField, name, opts string) (field, error) {
	s, err := r.typeSchema(sf.Type)
	if err != nil {
		return field{}, fmt.Errorf("%s.%s: %w", owner, sf.Name, err)
	}
	omit := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
	req := !omit
	if v, ok := sf.Tag.Lookup("required"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return field{}, fmt.Errorf("%w: %s.%s required:%q", ErrBadTag, owner, sf.Name, v)
		}
		req = b
	}
	base := sf.Type
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if hasOpt(opts, "string") {
		switch base.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.String:
			s = &Schema{Type: Types{"string"}}
			base = reflect.TypeFor[string]()
		}
	}
	if err := applyTags(s, sf, base); err != nil {
		return field{}, fmt.Errorf("%s.%s: %w", owner, sf.Name, err)
	}
	nullable := sf.Type.Kind() == reflect.Pointer && !omit
	if v, ok := sf.Tag.Lookup("nullable"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return field{}, fmt.Errorf("%w: %s.%s nullable:%q", ErrBadTag, owner, sf.Name, v)
		}
		nullable = b
	}
	if nullable {
		s = makeNullable(s)
	}
	return field{name: name, schema: s, req: req}, nil
}

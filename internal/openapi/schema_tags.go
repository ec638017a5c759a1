// Schema tags: how doc, enum, example and format tags refine a field's schema.

package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// makeNullable lets s also accept null: a typed schema gains "null" in its
// type list; a $ref or untyped schema becomes oneOf [s, {"type": "null"}]
// with the description kept outside.
func makeNullable(s *Schema) *Schema {
	if len(s.Type) > 0 {
		if !slices.Contains(s.Type, "null") {
			s.Type = append(s.Type, "null")
			if s.Enum != nil {
				s.Enum = append(s.Enum, nil)
			}
		}
		return s
	}
	if s.Ref == "" && s.refType == nil {
		return s // the empty schema already accepts null
	}
	desc := s.Description
	s.Description = ""
	return &Schema{Description: desc, OneOf: []*Schema{s, {Type: Types{"null"}}}}
}

var componentName = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// applyTags refines s with the doc/enum/example/... tags of sf. base is
// the field's type without pointers, which typed tag values parse as.
func applyTags(s *Schema, sf reflect.StructField, base reflect.Type) error {
	tag := sf.Tag
	if v, ok := tag.Lookup("doc"); ok {
		s.Description = v
	}
	if v, ok := tag.Lookup("format"); ok {
		s.Format = v
	}
	if v, ok := tag.Lookup("pattern"); ok {
		if _, err := regexp.Compile(v); err != nil {
			return fmt.Errorf("%w: pattern:%q: %v", ErrBadTag, v, err)
		}
		s.Pattern = v
	}
	elem := base
	if base.Kind() == reflect.Slice || base.Kind() == reflect.Array {
		elem = base.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
	}
	if v, ok := tag.Lookup("enum"); ok {
		var vals []any
		for p := range strings.SplitSeq(v, ",") {
			x, err := parseValue(strings.TrimSpace(p), elem)
			if err != nil {
				return fmt.Errorf("%w: enum:%q: %v", ErrBadTag, v, err)
			}
			vals = append(vals, x)
		}
		target := s
		if s.Items != nil && (base.Kind() == reflect.Slice || base.Kind() == reflect.Array) {
			target = s.Items
		}
		target.Enum = vals
	}
	if v, ok := tag.Lookup("example"); ok {
		x, err := parseValue(v, base)
		if err != nil {
			return fmt.Errorf("%w: example:%q: %v", ErrBadTag, v, err)
		}
		s.Examples = []any{x}
	}
	if v, ok := tag.Lookup("default"); ok {
		x, err := parseValue(v, base)
		if err != nil {
			return fmt.Errorf("%w: default:%q: %v", ErrBadTag, v, err)
		}
		s.Default = x
	}
	for _, k := range []struct {
		name string
		dst  **float64
	}{{"minimum", &s.Minimum}, {"maximum", &s.Maximum}} {
		if v, ok := tag.Lookup(k.name); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%w: %s:%q", ErrBadTag, k.name, v)
			}
			*k.dst = &f
		}
	}
	for _, k := range []struct {
		name string
		dst  **int
	}{{"minLength", &s.MinLength}, {"maxLength", &s.MaxLength}, {"minItems", &s.MinItems}, {"maxItems", &s.MaxItems}} {
		if v, ok := tag.Lookup(k.name); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%w: %s:%q", ErrBadTag, k.name, v)
			}
			*k.dst = &n
		}
	}
	return nil
}

// parseValue reads a tag value as a JSON value of type t: strings stay
// as they are, numbers and booleans are parsed, anything else is JSON.
func parseValue(v string, t reflect.Type) (any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return nil, err
		}
		return v, nil
	}
	switch t.Kind() {
	case reflect.String:
		return v, nil
	case reflect.Bool:
		return strconv.ParseBool(v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.ParseInt(v, 10, 64)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.ParseUint(v, 10, 64)
	case reflect.Float32, reflect.Float64:
		return strconv.ParseFloat(v, 64)
	}
	if implements(t, textMarshalerType) && !implements(t, jsonMarshalerType) {
		return v, nil
	}
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		return nil, err
	}
	return x, nil
}

// Component names: how each Go type becomes a named schema and its $refs.

package openapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// resolve names every component and fills in the $ref of every schema that
// points at one. A type is named by its Go name; where two types share a
// name, each is prefixed with its package's name (eligibility.Result →
// EligibilityResult); a collision after that is an error.
func (r *registry) resolve() (map[reflect.Type]string, map[string]*Schema, error) {
	names := map[reflect.Type]string{}
	byShort := map[string][]reflect.Type{}
	for t := range r.comps {
		byShort[shortName(t)] = append(byShort[shortName(t)], t)
	}
	out := map[string]*Schema{}
	owner := map[string]reflect.Type{}
	for short, ts := range byShort {
		for _, t := range ts {
			n := short
			if len(ts) > 1 {
				n = pkgPrefix(t) + short
			}
			if !componentName.MatchString(n) {
				return nil, nil, fmt.Errorf("%w: %s gives invalid name %q", ErrNameCollision, t, n)
			}
			if o, ok := owner[n]; ok {
				return nil, nil, fmt.Errorf("%w: %s and %s are both %q", ErrNameCollision, o, t, n)
			}
			owner[n] = t
			names[t] = n
			out[n] = r.comps[t]
		}
	}
	seen := map[*Schema]bool{}
	for _, s := range r.comps {
		setRefs(s, names, seen)
	}
	return names, out, nil
}

// setRefs fills in the $ref of every schema under s that points at a
// named struct type.
func setRefs(s *Schema, names map[reflect.Type]string, seen map[*Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if s.refType != nil {
		s.Ref = "#/components/schemas/" + names[s.refType]
	}
	setRefs(s.Items, names, seen)
	setRefs(s.AdditionalProperties, names, seen)
	for _, p := range s.Properties {
		setRefs(p, names, seen)
	}
	for _, o := range s.OneOf {
		setRefs(o, names, seen)
	}
}

// shortName is t's Go name; a generic instance Page[pkg.Item] becomes
// Page_Item.
func shortName(t reflect.Type) string {
	n := t.Name()
	base, args, ok := strings.Cut(n, "[")
	if !ok {
		return n
	}
	args = strings.TrimSuffix(args, "]")
	parts := []string{base}
	for a := range strings.SplitSeq(args, ",") {
		a = a[strings.LastIndex(a, "/")+1:]
		a = a[strings.LastIndex(a, ".")+1:]
		a = strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				return r
			}
			return -1
		}, a)
		parts = append(parts, a)
	}
	return strings.Join(parts, "_")
}

func pkgPrefix(t reflect.Type) string {
	p := t.PkgPath()
	p = p[strings.LastIndex(p, "/")+1:]
	if p == "" {
		return ""
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

// cloneSchema copies s deeply, so that tags applied to one use of a
// DefineType schema do not leak into another.
func cloneSchema(s *Schema) *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Type = slices.Clone(s.Type)
	c.Enum = slices.Clone(s.Enum)
	c.Required = slices.Clone(s.Required)
	c.Examples = slices.Clone(s.Examples)
	c.Items = cloneSchema(s.Items)
	c.AdditionalProperties = cloneSchema(s.AdditionalProperties)
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for k, v := range s.Properties {
			c.Properties[k] = cloneSchema(v)
		}
	}
	if s.OneOf != nil {
		c.OneOf = make([]*Schema, len(s.OneOf))
		for i, o := range s.OneOf {
			c.OneOf[i] = cloneSchema(o)
		}
	}
	return &c
}

func ptr[T any](v T) *T { return &v }

// Examples: whole-object examples of component schemas, from Go values.

package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Example makes v, a value of a named struct type (or a pointer to one),
// the example of that type's component schema, as encoding/json marshals
// it. The named struct values v holds (fields, slice elements, map values,
// at any depth) become the examples of their own types too, unless those
// have an example given by Example: so an example of a response also
// gives its nested objects theirs. A later Example of a type replaces an
// earlier one. Types that never become components are ignored.
func (d *Document) Example(v any) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct || rv.Type().Name() == "" {
		return fmt.Errorf("%w: an example must be a named struct, not %T", ErrUnsupportedType, v)
	}
	if d.examples == nil {
		d.examples = map[reflect.Type]example{}
	}
	return d.addExample(rv, true, 0)
}

type example struct {
	json     json.RawMessage
	explicit bool
}

// maxExampleDepth bounds the walk of an example value (a cyclic value
// would otherwise not end).
const maxExampleDepth = 32

func (d *Document) addExample(v reflect.Value, explicit bool, depth int) error {
	if depth > maxExampleDepth {
		return nil
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		if t.Name() != "" && t != timeType {
			if _, ok := d.examples[t]; !ok || explicit {
				b, err := marshalExample(v.Interface())
				if err != nil {
					return fmt.Errorf("openapi: example of %s: %w", t, err)
				}
				d.examples[t] = example{json: b, explicit: explicit}
			}
		}
		for i := range v.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			if err := d.addExample(v.Field(i), false, depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := d.addExample(v.Index(i), false, depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := d.addExample(it.Value(), false, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func marshalExample(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}

// applyExamples sets the examples of the component schemas named in names.
func (d *Document) applyExamples(names map[reflect.Type]string, schemas map[string]*Schema) {
	for t, n := range names {
		if ex, ok := d.examples[t]; ok {
			schemas[n].Examples = []any{ex.json}
		}
	}
}

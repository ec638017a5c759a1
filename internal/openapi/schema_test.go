package openapi

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type (
	leaf struct {
		Name string `json:"name"`
	}
	withPointers struct {
		Reason *string `json:"reason"`
		Note   *string `json:"note,omitempty"`
		Leaf   *leaf   `json:"leaf" doc:"A leaf, or null."`
	}
	tagged struct {
		Status string   `json:"status" enum:"active,inactive" doc:"Coverage status." example:"active"`
		Pct    float64  `json:"pct" minimum:"0" maximum:"100"`
		Code   string   `json:"code" pattern:"^PROC[0-9]{3}$" maxLength:"7" minLength:"7"`
		Day    string   `json:"day" format:"date"`
		Count  int      `json:"count" default:"10" example:"3"`
		Kinds  []string `json:"kinds" enum:"a,b" maxItems:"2"`
		Levels []int    `json:"levels,omitempty" enum:"1,2,3"`
	}
	required struct {
		A string `json:"a"`
		B string `json:"b,omitempty"`
		C string `json:"c,omitempty" required:"true"`
		D string `json:"d" required:"false"`
		E string `json:"e,omitzero"`
		F string
		//lint:ignore U1000 unexported: the schema skips it
		g string
		H string `json:"-"`
		//lint:ignore SA5008 the "-," tag names the field "-", as encoding/json reads it
		I string `json:"-,"`
		J int    `json:"j,string"`
	}
	base struct {
		ID      string `json:"id"`
		Created string `json:"created"`
	}
	extra struct {
		Tag string `json:"tag"`
	}
	embedding struct {
		base
		*extra
		Created time.Time `json:"created"` // hides base.Created
		Named   base      `json:"named"`
	}
	recursive struct {
		Value    int          `json:"value"`
		Children []*recursive `json:"children"`
	}
	collections struct {
		Tags    []string          `json:"tags"`
		Matrix  [][]float64       `json:"matrix"`
		Fixed   [3]int8           `json:"fixed"`
		Labels  map[string]int    `json:"labels"`
		ByID    map[int]leaf      `json:"by_id"`
		Raw     json.RawMessage   `json:"raw"`
		Any     any               `json:"any"`
		Blob    []byte            `json:"blob"`
		Addr    netip.Addr        `json:"addr"`
		Meta    map[string]any    `json:"meta,omitempty" nullable:"true"`
		Counter map[string]uint16 `json:"counter"`
	}
)

type (
	dupA struct{ ID string }
	dupB struct{ ID int }
)

type page[T any] struct {
	Items []T `json:"items"`
}

type marshaler struct{}

func (marshaler) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

func TestSchemaOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		v     any
		want  string            // the returned schema
		comps map[string]string // component schemas
	}{
		{"ok/bool", false, `{"type":"boolean"}`, nil},
		{"ok/string", "", `{"type":"string"}`, nil},
		{"ok/int", 0, `{"type":"integer","format":"int64"}`, nil},
		{"ok/int32", int32(0), `{"type":"integer","format":"int32"}`, nil},
		{"ok/uint8", uint8(0), `{"type":"integer","format":"int32","minimum":0}`, nil},
		{"ok/uint64", uint64(0), `{"type":"integer","format":"int64","minimum":0}`, nil},
		{"ok/float32", float32(0), `{"type":"number","format":"float"}`, nil},
		{"ok/float64", 0.0, `{"type":"number","format":"double"}`, nil},
		{"ok/time", time.Time{}, `{"type":"string","format":"date-time"}`, nil},
		{"ok/pointer at top is the element", new(int), `{"type":"integer","format":"int64"}`, nil},
		{"ok/slice", []string{}, `{"type":"array","items":{"type":"string"}}`, nil},
		{"ok/bytes", []byte{}, `{"type":"string","contentEncoding":"base64"}`, nil},
		{"ok/map", map[string]bool{}, `{"type":"object","additionalProperties":{"type":"boolean"}}`, nil},
		{"ok/anonymous struct is inline", struct {
			X int `json:"x"`
		}{}, `{"type":"object","properties":{"x":{"type":"integer","format":"int64"}},"required":["x"]}`, nil},
		{"ok/named struct is a component", leaf{}, `{"$ref":"#/components/schemas/leaf"}`, map[string]string{
			"leaf": `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		}},
		{"ok/pointers nullable unless omitempty", withPointers{}, `{"$ref":"#/components/schemas/withPointers"}`, map[string]string{
			"withPointers": `{"type":"object","properties":{` +
				`"leaf":{"description":"A leaf, or null.","oneOf":[{"$ref":"#/components/schemas/leaf"},{"type":"null"}]},` +
				`"note":{"type":"string"},` +
				`"reason":{"type":["string","null"]}},"required":["leaf","reason"]}`,
			"leaf": `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		}},
		{"ok/tags", tagged{}, `{"$ref":"#/components/schemas/tagged"}`, map[string]string{
			"tagged": `{"type":"object","properties":{` +
				`"code":{"type":"string","pattern":"^PROC[0-9]{3}$","minLength":7,"maxLength":7},` +
				`"count":{"type":"integer","format":"int64","default":10,"examples":[3]},` +
				`"day":{"type":"string","format":"date"},` +
				`"kinds":{"type":"array","items":{"type":"string","enum":["a","b"]},"maxItems":2},` +
				`"levels":{"type":"array","items":{"type":"integer","format":"int64","enum":[1,2,3]}},` +
				`"pct":{"type":"number","format":"double","minimum":0,"maximum":100},` +
				`"status":{"description":"Coverage status.","type":"string","enum":["active","inactive"],"examples":["active"]}},` +
				`"required":["code","count","day","kinds","pct","status"]}`,
		}},
		{"ok/required rule", required{}, `{"$ref":"#/components/schemas/required"}`, map[string]string{
			"required": `{"type":"object","properties":{` +
				`"-":{"type":"string"},"F":{"type":"string"},"a":{"type":"string"},"b":{"type":"string"},` +
				`"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"},"j":{"type":"string"}},` +
				`"required":["-","F","a","c","j"]}`,
		}},
		{"ok/embedded flattened, outer wins, pointer-embedded optional", embedding{}, `{"$ref":"#/components/schemas/embedding"}`, map[string]string{
			"embedding": `{"type":"object","properties":{` +
				`"created":{"type":"string","format":"date-time"},"id":{"type":"string"},` +
				`"named":{"$ref":"#/components/schemas/base"},"tag":{"type":"string"}},` +
				`"required":["created","id","named"]}`,
			"base": `{"type":"object","properties":{"created":{"type":"string"},"id":{"type":"string"}},"required":["created","id"]}`,
		}},
		{"ok/recursive", recursive{}, `{"$ref":"#/components/schemas/recursive"}`, map[string]string{
			"recursive": `{"type":"object","properties":{` +
				`"children":{"type":"array","items":{"$ref":"#/components/schemas/recursive"}},` +
				`"value":{"type":"integer","format":"int64"}},"required":["children","value"]}`,
		}},
		{"ok/collections", collections{}, `{"$ref":"#/components/schemas/collections"}`, map[string]string{
			"collections": `{"type":"object","properties":{` +
				`"addr":{"type":"string"},` +
				`"any":{},` +
				`"blob":{"type":"string","contentEncoding":"base64"},` +
				`"by_id":{"type":"object","additionalProperties":{"$ref":"#/components/schemas/leaf"}},` +
				`"counter":{"type":"object","additionalProperties":{"type":"integer","format":"int32","minimum":0}},` +
				`"fixed":{"type":"array","items":{"type":"integer","format":"int32"},"minItems":3,"maxItems":3},` +
				`"labels":{"type":"object","additionalProperties":{"type":"integer","format":"int64"}},` +
				`"matrix":{"type":"array","items":{"type":"array","items":{"type":"number","format":"double"}}},` +
				`"meta":{"type":["object","null"],"additionalProperties":{}},` +
				`"raw":{},` +
				`"tags":{"type":"array","items":{"type":"string"}}},` +
				`"required":["addr","any","blob","by_id","counter","fixed","labels","matrix","raw","tags"]}`,
			"leaf": `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		}},
		{"ok/generic", page[leaf]{}, `{"$ref":"#/components/schemas/page_leaf"}`, map[string]string{
			"page_leaf": `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/components/schemas/leaf"}}},"required":["items"]}`,
			"leaf":      `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, comps, err := SchemaOf(tt.v)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, mustJSON(t, s))
			assert.Len(t, comps, len(tt.comps))
			for name, want := range tt.comps {
				require.Contains(t, comps, name)
				assert.JSONEq(t, want, mustJSON(t, comps[name]), name)
			}
		})
	}
}

func TestSchemaOfErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want error
	}{
		{"fail/chan", make(chan int), ErrUnsupportedType},
		{"fail/func field", struct {
			F func() `json:"f"`
		}{}, ErrUnsupportedType},
		{"fail/complex", complex(1, 2), ErrUnsupportedType},
		{"fail/custom marshaler", marshaler{}, ErrUnsupportedType},
		{"fail/map with struct key", map[leaf]int{}, ErrUnsupportedType},
		{"fail/bad minimum", struct {
			X int `json:"x" minimum:"low"`
		}{}, ErrBadTag},
		{"fail/bad maxLength", struct {
			X string `json:"x" maxLength:"-1"`
		}{}, ErrBadTag},
		{"fail/enum not an int", struct {
			X int `json:"x" enum:"1,two"`
		}{}, ErrBadTag},
		{"fail/bad example", struct {
			X bool `json:"x" example:"maybe"`
		}{}, ErrBadTag},
		{"fail/bad pattern", struct {
			X string `json:"x" pattern:"(["`
		}{}, ErrBadTag},
		{"fail/bad required", struct {
			X string `json:"x" required:"yes please"`
		}{}, ErrBadTag},
		{"fail/same name same depth", struct {
			dupA
			dupB
		}{}, ErrBadTag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := SchemaOf(tt.v)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestSchemaOfNil(t *testing.T) {
	t.Parallel()
	s, comps, err := SchemaOf(nil)
	require.NoError(t, err)
	assert.Nil(t, s)
	assert.Empty(t, comps)
}

func TestDefineType(t *testing.T) {
	t.Parallel()
	type holder struct {
		M  marshaler  `json:"m" doc:"Marshalled by hand."`
		MP *marshaler `json:"mp"`
	}
	d := New(Info{Title: "t", Version: "1"})
	d.DefineType(marshaler{}, Schema{Type: Types{"string"}, Pattern: "^x$"})
	require.NoError(t, d.Add(Operation{Method: "GET", Path: "/h", Responses: map[int]Response{200: {Body: holder{}}}}))
	out, err := d.JSON()
	require.NoError(t, err)
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(out, &doc))
	assert.JSONEq(t, `{"type":"object","properties":{`+
		`"m":{"description":"Marshalled by hand.","type":"string","pattern":"^x$"},`+
		`"mp":{"type":["string","null"],"pattern":"^x$"}},"required":["m","mp"]}`,
		string(doc.Components.Schemas["holder"]))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestSchemaRoundTrip(t *testing.T) {
	t.Parallel()
	_, comps, err := SchemaOf(collections{})
	require.NoError(t, err)
	for name, s := range comps {
		b := mustJSON(t, s)
		var back Schema
		require.NoError(t, json.Unmarshal([]byte(b), &back), name)
		assert.JSONEq(t, b, mustJSON(t, &back), name)
	}
	var bad Schema
	require.Error(t, json.Unmarshal([]byte(`{"type":7}`), &bad))
}

// FuzzSchemaJSON: any JSON that decodes into a Schema encodes again, and
// the encoding is stable.
func FuzzSchemaJSON(f *testing.F) {
	f.Add([]byte(`{"type":["string","null"],"enum":["a",null]}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"$ref":"#/x"}},"required":["a"]}`))
	f.Add([]byte(`{"oneOf":[{"type":"null"}],"minimum":1e308,"items":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Schema
		if json.Unmarshal(b, &s) != nil {
			return
		}
		once, err := json.Marshal(&s)
		require.NoError(t, err)
		var again Schema
		require.NoError(t, json.Unmarshal(once, &again))
		twice, err := json.Marshal(&again)
		require.NoError(t, err)
		require.Equal(t, string(once), string(twice))
	})
}

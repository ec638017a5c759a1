package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// fields splits one message into its top-level fields: number → values
// (varints as uint64, length-delimited as []byte).
func fields(t *testing.T, b []byte) map[protowire.Number][]any {
	t.Helper()
	out := map[protowire.Number][]any{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0)
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			require.GreaterOrEqual(t, n, 0)
			out[num], b = append(out[num], v), b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			require.GreaterOrEqual(t, n, 0)
			out[num], b = append(out[num], v), b[n:]
		default:
			t.Fatalf("field %d: wire type %d is never written", num, typ)
		}
	}
	return out
}

// The written model reads back, with a generic protobuf reader, as the
// ModelProto fields of onnx.proto: IR version, opset, graph with its
// node, initializer, input and output, metadata.
func TestMarshalReadsBack(t *testing.T) {
	t.Parallel()
	b, err := Marshal(&Model{
		ProducerName: "p", ModelVersion: 3, Opset: 13, Metadata: []KV{{"k", "v"}},
		Graph: Graph{
			Name:         "g",
			Nodes:        []Node{{Op: "Add", Name: "n", Inputs: []string{"x", "c"}, Outputs: []string{"y"}, Attrs: []Attr{{Name: "axis", Int: -1}}}},
			Initializers: []Tensor{{Name: "c", Type: TypeDouble, Dims: []int64{2}, Doubles: []float64{1, 2}}},
			Inputs:       []Value{{Name: "x", Type: TypeDouble, Shape: []Dim{{Param: "N"}, {Size: 2}}}},
			Outputs:      []Value{{Name: "y", Type: TypeDouble, Shape: []Dim{{Param: "N"}, {Size: 2}}}},
		},
	})
	require.NoError(t, err)
	m := fields(t, b)
	assert.Equal(t, []any{uint64(IRVersion)}, m[1])
	assert.Equal(t, []any{[]byte("p")}, m[2])
	assert.Equal(t, []any{uint64(3)}, m[5])
	op := fields(t, m[8][0].([]byte))
	assert.Equal(t, []any{uint64(13)}, op[2])
	kv := fields(t, m[14][0].([]byte))
	assert.Equal(t, []any{[]byte("k")}, kv[1])
	g := fields(t, m[7][0].([]byte))
	node := fields(t, g[1][0].([]byte))
	assert.Equal(t, []any{[]byte("x"), []byte("c")}, node[1])
	assert.Equal(t, []any{[]byte("Add")}, node[4])
	attr := fields(t, node[5][0].([]byte))
	assert.Equal(t, []any{uint64(1<<64 - 1)}, attr[3], "int64 -1 as a ten-byte varint")
	tensor := fields(t, g[5][0].([]byte))
	assert.Equal(t, []any{uint64(2)}, tensor[1])
	assert.Equal(t, []any{uint64(TypeDouble)}, tensor[2])
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40}, tensor[9][0], "raw_data little-endian")
	in := fields(t, g[11][0].([]byte))
	assert.Equal(t, []any{[]byte("x")}, in[1])
}

func TestMarshalRefuses(t *testing.T) {
	t.Parallel()
	ok := func() *Model { return &Model{Opset: 13, Graph: Graph{Name: "g"}} }
	for name, m := range map[string]func(*Model){
		"no opset":        func(m *Model) { m.Opset = 0 },
		"node without op": func(m *Model) { m.Graph.Nodes = []Node{{Outputs: []string{"y"}}} },
		"short tensor": func(m *Model) {
			m.Graph.Initializers = []Tensor{{Name: "c", Type: TypeDouble, Dims: []int64{3}, Doubles: []float64{1}}}
		},
		"negative dim": func(m *Model) { m.Graph.Initializers = []Tensor{{Name: "c", Type: TypeInt64, Dims: []int64{-1}}} },
		"other type":   func(m *Model) { m.Graph.Initializers = []Tensor{{Name: "c", Type: 1, Doubles: []float64{1}}} },
	} {
		mm := ok()
		m(mm)
		_, err := Marshal(mm)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}
	_, err := Marshal(ok())
	assert.NoError(t, err)
}

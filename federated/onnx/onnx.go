// Package onnx writes ONNX models: the few messages of onnx.proto (ModelProto,
// GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto) that a
// small inference graph needs, encoded as protocol buffers by hand. It holds
// no model knowledge: package federated builds the graph of a trained model.
//
// Field numbers are those of onnx/onnx.proto (IR version 8). Only double
// (float64) and int64 tensors are written; that is all the exports need.
package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// IRVersion is the ONNX IR version written (8: ONNX 1.10 and later).
const IRVersion = 8

// Tensor element types (TensorProto.DataType).
const (
	TypeInt64  = 7
	TypeDouble = 11
)

// ErrInvalid is wrapped by errors about a graph that cannot be written.
var ErrInvalid = errors.New("onnx: invalid model")

// Model is a ModelProto: one graph and the operator sets it uses.
type Model struct {
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	Doc             string
	Opset           int64 // the default domain's operator set version
	Graph           Graph
	Metadata        []KV // metadata_props, in order
}

// KV is a StringStringEntryProto.
type KV struct{ Key, Value string }

// Graph is a GraphProto.
type Graph struct {
	Name         string
	Doc          string
	Nodes        []Node
	Initializers []Tensor
	Inputs       []Value
	Outputs      []Value
}

// Node is a NodeProto of the default domain.
type Node struct {
	Op      string
	Name    string
	Inputs  []string
	Outputs []string
	Attrs   []Attr
}

// Attr is an AttributeProto holding one int64 (the only kind the exports use).
type Attr struct {
	Name string
	Int  int64
}

// Tensor is a TensorProto with its data: Doubles for TypeDouble, Ints for
// TypeInt64. Dims empty is a scalar.
type Tensor struct {
	Name    string
	Type    int32
	Dims    []int64
	Doubles []float64
	Ints    []int64
}

// Value is a ValueInfoProto of a tensor: its element type and shape, where
// a dimension is a fixed size (Dim > 0) or named (Param, e.g. "N").
type Value struct {
	Name  string
	Doc   string
	Type  int32
	Shape []Dim
}

// Dim is one dimension of a Value's shape.
type Dim struct {
	Size  int64
	Param string
}

// Marshal encodes m as an ONNX model file (a serialized ModelProto).
func Marshal(m *Model) ([]byte, error) {
	if m.Opset < 1 || m.Graph.Name == "" {
		return nil, fmt.Errorf("%w: opset and graph name are required", ErrInvalid)
	}
	g, err := m.Graph.encode()
	if err != nil {
		return nil, err
	}
	var b buf
	b.varintField(1, IRVersion)
	b.stringField(2, m.ProducerName)
	b.stringField(3, m.ProducerVersion)
	b.stringField(4, m.Domain)
	b.varintField(5, uint64(m.ModelVersion))
	b.stringField(6, m.Doc)
	b.bytesField(7, g)
	var op buf
	op.stringField(1, "") // the default (ai.onnx) domain
	op.varintField(2, uint64(m.Opset))
	b.bytesField(8, op)
	for _, kv := range m.Metadata {
		var e buf
		e.stringField(1, kv.Key)
		e.stringField(2, kv.Value)
		b.bytesField(14, e)
	}
	return b, nil
}

func (g *Graph) encode() (buf, error) {
	var b buf
	for _, n := range g.Nodes {
		if n.Op == "" || len(n.Outputs) == 0 {
			return nil, fmt.Errorf("%w: node %q needs an op and an output", ErrInvalid, n.Name)
		}
		var nb buf
		for _, in := range n.Inputs {
			nb.alwaysString(1, in)
		}
		for _, out := range n.Outputs {
			nb.alwaysString(2, out)
		}
		nb.stringField(3, n.Name)
		nb.stringField(4, n.Op)
		for _, a := range n.Attrs {
			var ab buf
			ab.stringField(1, a.Name)
			ab.alwaysVarint(3, uint64(a.Int))
			ab.alwaysVarint(20, 2) // AttributeType INT
			nb.bytesField(5, ab)
		}
		b.bytesField(1, nb)
	}
	b.stringField(2, g.Name)
	for _, t := range g.Initializers {
		tb, err := t.encode()
		if err != nil {
			return nil, err
		}
		b.bytesField(5, tb)
	}
	b.stringField(10, g.Doc)
	for _, v := range g.Inputs {
		b.bytesField(11, v.encode())
	}
	for _, v := range g.Outputs {
		b.bytesField(12, v.encode())
	}
	return b, nil
}

func (t *Tensor) encode() (buf, error) {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return nil, fmt.Errorf("%w: tensor %q has a negative dimension", ErrInvalid, t.Name)
		}
		n *= d
	}
	var b buf
	for _, d := range t.Dims {
		b.alwaysVarint(1, uint64(d))
	}
	b.alwaysVarint(2, uint64(t.Type))
	b.stringField(8, t.Name)
	var raw []byte
	switch t.Type {
	case TypeDouble:
		if int64(len(t.Doubles)) != n || len(t.Ints) != 0 {
			return nil, fmt.Errorf("%w: tensor %q holds %d values for %d", ErrInvalid, t.Name, len(t.Doubles), n)
		}
		raw = make([]byte, 8*len(t.Doubles))
		for i, v := range t.Doubles {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
		}
	case TypeInt64:
		if int64(len(t.Ints)) != n || len(t.Doubles) != 0 {
			return nil, fmt.Errorf("%w: tensor %q holds %d values for %d", ErrInvalid, t.Name, len(t.Ints), n)
		}
		raw = make([]byte, 8*len(t.Ints))
		for i, v := range t.Ints {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		}
	default:
		return nil, fmt.Errorf("%w: tensor %q: element type %d is not written", ErrInvalid, t.Name, t.Type)
	}
	// raw_data is little-endian whatever the host, as onnx.proto says.
	b.bytesField(9, raw)
	return b, nil
}

func (v *Value) encode() buf {
	var shape buf
	for _, d := range v.Shape {
		var db buf
		if d.Param != "" {
			db.stringField(2, d.Param)
		} else {
			db.alwaysVarint(1, uint64(d.Size))
		}
		shape.bytesField(1, db)
	}
	var tt buf
	tt.alwaysVarint(1, uint64(v.Type))
	tt.alwaysBytes(2, shape)
	var ty buf
	ty.bytesField(1, tt)
	var b buf
	b.stringField(1, v.Name)
	b.bytesField(2, ty)
	b.stringField(3, v.Doc)
	return b
}

// buf is a protocol-buffer message under construction. Fields are written
// in the order called; proto3 defaults (0, "", empty) are left out unless
// written by an always* method.
type buf []byte

func (b *buf) tag(field, wire int) { b.varint(uint64(field)<<3 | uint64(wire)) }

func (b *buf) varint(v uint64) { *b = binary.AppendUvarint(*b, v) }

func (b *buf) alwaysVarint(field int, v uint64) {
	b.tag(field, 0)
	b.varint(v)
}

func (b *buf) varintField(field int, v uint64) {
	if v != 0 {
		b.alwaysVarint(field, v)
	}
}

func (b *buf) alwaysBytes(field int, v []byte) {
	b.tag(field, 2)
	b.varint(uint64(len(v)))
	*b = append(*b, v...)
}

func (b *buf) bytesField(field int, v []byte) {
	if len(v) != 0 {
		b.alwaysBytes(field, v)
	}
}

func (b *buf) stringField(field int, s string) { b.bytesField(field, []byte(s)) }

// alwaysString writes s even when empty: a node's input list is positional,
// and "" there means an omitted optional input.
func (b *buf) alwaysString(field int, s string) { b.alwaysBytes(field, []byte(s)) }

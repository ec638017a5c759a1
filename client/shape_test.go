package client_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/server"
)

// fill sets every field of v, recursively, to a non-zero value that differs
// per field, so a JSON round trip shows any field one side lacks.
func fill(v reflect.Value, seed *int) {
	*seed++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), seed)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 1, 0, 0, *seed, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), seed)
		fill(v.Index(1), seed)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *seed))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*seed))
	case reflect.Float64:
		v.SetFloat(float64(*seed) + 0.5)
	}
}

// sameJSON checks that a filled from-value survives decoding into a to-value
// with unknown fields refused, and encodes back to the same JSON.
func sameJSON(t *testing.T, from, to any) {
	t.Helper()
	seed := 0
	fill(reflect.ValueOf(from).Elem(), &seed)
	a, err := json.Marshal(from)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(a))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(to), "%T → %T", from, to)
	b, err := json.Marshal(to)
	require.NoError(t, err)
	require.JSONEq(t, string(a), string(b), "%T → %T", from, to)
}

// TestWireTypesMatchServer keeps the SDK's own copies of the server's wire
// types (the SDK may not import server) identical on the wire, both ways.
func TestWireTypesMatchServer(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]any{
		{&server.CreateKeyRequest{}, &client.CreateKeyRequest{}},
		{&server.KeyCreated{}, &client.KeyCreated{}},
		{&server.KeyInfo{}, &client.KeyInfo{}},
		{&server.KeyList{}, &client.KeyList{}},
		{&server.KeyRevoked{}, &client.KeyRevoked{}},
		{&server.KeyUsage{}, &client.KeyUsage{}},
		{&server.Whitelist{}, &client.Whitelist{}},
	} {
		t.Run(fmt.Sprintf("%T", pair[1]), func(t *testing.T) {
			t.Parallel()
			sameJSON(t, pair[0], reflect.New(reflect.TypeOf(pair[1]).Elem()).Interface())
			sameJSON(t, pair[1], reflect.New(reflect.TypeOf(pair[0]).Elem()).Interface())
		})
	}
}

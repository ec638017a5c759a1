package openapi_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/openapi"
)

type exItem struct {
	Code string `json:"code"`
}

type exOrder struct {
	ID    string   `json:"id"`
	Items []exItem `json:"items"`
	Note  *exItem  `json:"note"`
}

func TestDocumentExample(t *testing.T) {
	t.Parallel()
	doc := openapi.New(openapi.Info{Title: "t", Version: "1"})
	require.NoError(t, doc.Add(openapi.Operation{Method: "POST", Path: "/orders", Request: exOrder{},
		Responses: map[int]openapi.Response{200: {Body: exOrder{}}}}))
	// The order's example gives its item theirs; an explicit item example,
	// even given first, wins over the derived one.
	require.NoError(t, doc.Example(exItem{Code: "70551"}))
	require.NoError(t, doc.Example(&exOrder{ID: "o-1", Items: []exItem{{Code: "71046"}}}))
	require.ErrorIs(t, doc.Example("just a string"), openapi.ErrUnsupportedType)
	require.ErrorIs(t, doc.Example(map[string]int{}), openapi.ErrUnsupportedType)

	spec, err := doc.JSON()
	require.NoError(t, err)
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Examples []json.RawMessage `json:"examples"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(spec, &d))
	require.Len(t, d.Components.Schemas["exOrder"].Examples, 1)
	assert.JSONEq(t, `{"id":"o-1","items":[{"code":"71046"}],"note":null}`, string(d.Components.Schemas["exOrder"].Examples[0]))
	require.Len(t, d.Components.Schemas["exItem"].Examples, 1)
	assert.JSONEq(t, `{"code":"70551"}`, string(d.Components.Schemas["exItem"].Examples[0]))

	// A later explicit example replaces an earlier one.
	require.NoError(t, doc.Example(exItem{Code: "G0103"}))
	spec, err = doc.JSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(spec, &d))
	assert.JSONEq(t, `{"code":"G0103"}`, string(d.Components.Schemas["exItem"].Examples[0]))
}

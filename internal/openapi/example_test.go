package openapi_test

import (
	"fmt"
	"net/http"

	"github.com/healthagents/healthagents/internal/openapi"
)

type greetRequest struct {
	Name string `json:"name" doc:"Who to greet." maxLength:"64"`
}

type greeting struct {
	Message string  `json:"message"`
	Mood    *string `json:"mood" enum:"happy,tired"`
}

func Example() {
	doc := openapi.New(openapi.Info{Title: "Greeter", Version: "1.0.0"})
	err := doc.Add(openapi.Operation{
		Method: http.MethodPost, Path: "/greet/{lang}",
		OperationID: "greet", Summary: "Greet someone", Tags: []string{"greeting"},
		Request:     greetRequest{},
		Responses:   map[int]openapi.Response{200: {Description: "The greeting.", Body: greeting{}}},
		Errors:      []int{400, 429},
		RateLimited: true,
		Auth:        openapi.AuthOptional,
		PathParams:  []openapi.Param{{Name: "lang", Description: "Language.", Schema: &openapi.Schema{Type: openapi.Types{"string"}, Enum: []any{"en", "fr"}}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := doc.JSON()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(out) > 0)
	// Output: true
}

func ExampleSchemaOf() {
	s, comps, err := openapi.SchemaOf(greeting{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Ref)
	fmt.Println(comps["greeting"].Required)
	fmt.Println(comps["greeting"].Properties["mood"].Type, comps["greeting"].Properties["mood"].Enum)
	// Output:
	// #/components/schemas/greeting
	// [message mood]
	// [string null] [happy tired <nil>]
}

func ExampleSwaggerUI() {
	mux := http.NewServeMux()
	spec := openapi.SpecHandler([]byte(`{"openapi":"3.1.0"}`))
	docs, err := openapi.SwaggerUI("/openapi.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	ref, err := openapi.Redoc("/openapi.json", openapi.WithTitle("Greeter"))
	if err != nil {
		fmt.Println(err)
		return
	}
	mux.Handle("GET /openapi.json", spec)
	mux.Handle("GET /docs", docs)
	mux.Handle("GET /docs/", docs)
	mux.Handle("GET /redoc", ref)
	mux.Handle("GET /redoc/", ref)
	fmt.Println("mounted")
	// Output: mounted
}

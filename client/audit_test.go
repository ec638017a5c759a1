package client_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/server"
)

// TestAuditWireTypesMatchServer keeps the SDK's audit types identical on the
// wire to the server's, both ways.
func TestAuditWireTypesMatchServer(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]any{
		{&server.AuditEntry{}, &client.AuditEntry{}},
		{&server.AuditList{}, &client.AuditList{}},
		{&server.AuditVerification{}, &client.AuditVerification{}},
	} {
		t.Run(fmt.Sprintf("%T", pair[1]), func(t *testing.T) {
			t.Parallel()
			sameJSON(t, pair[0], reflect.New(reflect.TypeOf(pair[1]).Elem()).Interface())
			sameJSON(t, pair[1], reflect.New(reflect.TypeOf(pair[0]).Elem()).Interface())
		})
	}
}

package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
)

// ExampleClient_VerifyEligibility seals a record and checks eligibility
// against the real server, mounted in an httptest server.
func ExampleClient_VerifyEligibility() {
	key, _ := cipher.GenerateKey() // the server's FERNET_KEY
	kr, _ := cipher.ParseKeyring(key)
	svc, _ := healthagents.New(kr)
	h, _ := server.New(server.Deps{Service: svc})
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := client.New(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	year := time.Now().Year()
	env, err := client.SealRecord(&record.Record{
		PatientID: "PT-000123",
		Coverage: &record.Coverage{
			MemberID: "W123456789", Status: "active",
			Start: fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year),
		},
	}, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.VerifyEligibility(context.Background(), env, "PROC001")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("eligible=%t coverage=%g%% prior_auth=%t\n", res.Eligible, res.CoveragePct, res.RequiresAuthorization)

	_, err = c.ValidatePrescription(context.Background(), env, "NOPE-1")
	fmt.Println(client.IsNotFound(err), err)
	// Output:
	// eligible=true coverage=80% prior_auth=true
	// true healthagents: 404 Drug code NOPE-1 not found
}

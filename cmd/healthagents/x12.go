package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/x12"
)

// x12Command is `healthagents x12 271 [flags] < response.json`: it renders
// a v1 eligibility answer (POST /api/v1/eligibility/verify's JSON, alone or
// as {"request": ..., "response": ...}) as an X12 005010X279A1 271 on
// standard output (docs/x12.md). An error answer (the problem JSON of a 4xx
// or 5xx) becomes a 271 with an AAA rejection, or EB*6 for no coverage.
func x12Command(args []string, now func() time.Time, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "271" {
		return errors.New("usage: healthagents x12 271 [flags] < response.json (flags: -h)")
	}
	fs := flag.NewFlagSet("x12 271", flag.ContinueOnError)
	fs.SetOutput(stderr)
	member := fs.String("member", "", "subscriber member id (default: the request's member_id)")
	npi := fs.String("npi", "", "information receiver's NPI (default: the request's provider_npi)")
	procedure := fs.String("procedure", "", "procedure code (default: the request's procedure_code)")
	reference := fs.String("reference", "", "BHT03 reference of the request (default: patient_id-procedure_code)")
	sender := fs.String("sender", "HEALTHAGENTS", "interchange and application sender id (ISA06, GS02)")
	receiver := fs.String("receiver", "CLEARINGHOUSE", "interchange and application receiver id (ISA08, GS03)")
	sourceName := fs.String("source-name", "HEALTHAGENTS", "information source name (2100A NM103)")
	sourceID := fs.String("source-id", "HEALTHAGENTS", "information source payer id (2100A NM109, qualifier PI)")
	control := fs.Int("control", 1, "interchange control number (ISA13; also GS06 and ST02)")
	production := fs.Bool("production", false, "mark the interchange production (ISA15 P) instead of test (T)")
	at := fs.String("time", "", "interchange time and service date, RFC 3339 (default: now)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("x12 271: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return fmt.Errorf("x12 271: %w", err)
	}
	var in struct {
		Request  *healthagents.V1EligibilityRequest `json:"request"`
		Response json.RawMessage                    `json:"response"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("x12 271: standard input is not JSON: %w", err)
	}
	if in.Response == nil {
		in.Response = raw // the bare answer
	}
	// An error answer is an RFC 9457 problem: a status and a detail, and
	// no "eligible".
	var answer struct {
		healthagents.V1EligibilityResult
		Eligible *bool  `json:"eligible"`
		Status   int    `json:"status"`
		Detail   string `json:"detail"`
	}
	if err := json.Unmarshal(in.Response, &answer); err != nil {
		return fmt.Errorf("x12 271: standard input is not an eligibility answer: %w", err)
	}
	problem := answer.Eligible == nil
	if problem && (answer.Status < 400 || answer.Status > 599) {
		return errors.New("x12 271: standard input is neither an eligibility answer (no \"eligible\") nor an error answer (a problem with a 4xx or 5xx \"status\")")
	}
	req := healthagents.V1EligibilityRequest{}
	if in.Request != nil {
		req = *in.Request
	}
	pick := func(flagValue, fromRequest, name string) (string, error) {
		if flagValue != "" {
			return flagValue, nil
		}
		if fromRequest == "" {
			return "", fmt.Errorf("x12 271: no %s: give -%s, or the input as {\"request\": ..., \"response\": ...}", name, name)
		}
		return fromRequest, nil
	}
	e := x12.Eligibility{SourceName: *sourceName, SourceID: *sourceID}
	if e.MemberID, err = pick(*member, req.MemberID, "member"); err != nil {
		return err
	}
	if e.ProviderNPI, err = pick(*npi, req.ProviderNPI, "npi"); err != nil {
		return err
	}
	if e.ProcedureCode, err = pick(*procedure, req.ProcedureCode, "procedure"); err != nil {
		return err
	}
	e.Reference = *reference
	if e.Reference == "" {
		e.Reference = e.ProcedureCode
		if req.PatientID != "" {
			e.Reference = req.PatientID + "-" + e.ProcedureCode
		}
	}
	t := now()
	if *at != "" {
		if t, err = time.Parse(time.RFC3339, *at); err != nil {
			return fmt.Errorf("x12 271: -time must be RFC 3339, e.g. 2026-11-25T09:00:00Z")
		}
	}
	e.ServiceDate = t
	if problem {
		e.Rejection, e.Inactive = x12.ForProblem(answer.Status, answer.Detail)
	} else {
		res := answer.V1EligibilityResult
		e.Eligible, e.CoveragePercentage, e.RequiresAuthorization = *answer.Eligible, res.CoveragePercentage, res.RequiresAuthorization
		e.DeductibleMet, e.CopayAmount = res.DeductibleMet, res.CopayAmount
		if res.Reason != nil {
			e.Reason = *res.Reason
		}
		if res.VerificationProof != nil {
			e.ProofTransaction = res.VerificationProof.BlockchainTx
		}
	}
	out, err := x12.Render271(x12.Interchange{SenderID: *sender, ReceiverID: *receiver, Control: *control, Time: t, Production: *production}, e)
	if err != nil {
		return fmt.Errorf("x12 271: %w", err)
	}
	_, err = stdout.Write(out)
	return err
}

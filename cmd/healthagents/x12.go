package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	status := fs.Int("status", 0, "the answer's HTTP status, for an error body without one ({\"detail\": ...}; default: the status line of `curl -i` output, else the body's \"status\")")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("x12 271: %w", err)
	}
	if *status != 0 && (*status < 100 || *status > 599) {
		return fmt.Errorf("x12 271: -status must be an HTTP status (100-599)")
	}
	raw, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return fmt.Errorf("x12 271: %w", err)
	}
	in, answer, err := readAnswer(raw, *status)
	if err != nil {
		return err
	}
	problem := answer.Eligible == nil
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
			// Refused rather than written without them: its EB segments
			// would be bound to nothing the 271's holder can check.
			if e.Statement, e.Proof, err = healthagents.X12DecisionTexts(&res); err != nil {
				return fmt.Errorf("x12 271: the answer cannot be sent as a 271 (%w): send the JSON answer instead", err)
			}
		}
	}
	out, err := x12.Render271(x12.Interchange{SenderID: *sender, ReceiverID: *receiver, Control: *control, Time: t, Production: *production}, e)
	if err != nil {
		return fmt.Errorf("x12 271: %w", err)
	}
	_, err = stdout.Write(out)
	return err
}

// eligibilityAnswer is one answer of POST /api/v1/eligibility/verify: the
// result (with "eligible"), or an error: the service's {"detail": ...}
// (or an RFC 9457 problem) with its HTTP status.
type eligibilityAnswer struct {
	healthagents.V1EligibilityResult
	Eligible *bool  `json:"eligible"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
}

// answerInput is what x12 271 reads: the bare answer, or the answer beside
// its request.
type answerInput struct {
	Request  *healthagents.V1EligibilityRequest `json:"request"`
	Response json.RawMessage                    `json:"response"`
}

// readAnswer reads standard input: JSON, or `curl -i` output (status
// lines and headers, then the body). The status of an error answer is
// -status when given (flag), else the last status line, else the body's
// "status"; two that disagree are refused. An error answer whose body is
// not JSON (a proxy's page) is still an error answer when its status is
// known.
func readAnswer(raw []byte, flagStatus int) (answerInput, eligibilityAnswer, error) {
	var in answerInput
	var answer eligibilityAnswer
	lineStatus, body, err := curlHead(raw)
	if err != nil {
		return in, answer, err
	}
	status := flagStatus
	if lineStatus != 0 {
		if status != 0 && status != lineStatus {
			return in, answer, fmt.Errorf("x12 271: -status %d but the answer's status line says %d", status, lineStatus)
		}
		status = lineStatus
	}
	if err := json.Unmarshal(body, &in); err != nil {
		if status >= 400 {
			answer.Status = status // no JSON: the status alone decides the AAA
			return in, answer, nil
		}
		return in, answer, fmt.Errorf("x12 271: standard input is not JSON: %w", err)
	}
	if in.Response == nil {
		in.Response = body // the bare answer
	}
	if err := json.Unmarshal(in.Response, &answer); err != nil {
		return in, answer, fmt.Errorf("x12 271: standard input is not an eligibility answer: %w", err)
	}
	if status != 0 {
		if answer.Status != 0 && answer.Status != status {
			return in, answer, fmt.Errorf("x12 271: the answer's status is %d but its body says %d", status, answer.Status)
		}
		answer.Status = status
	}
	switch {
	case answer.Eligible != nil && answer.Status >= 300:
		return in, answer, fmt.Errorf("x12 271: an eligibility answer (with \"eligible\") cannot come with status %d", answer.Status)
	case answer.Eligible == nil && (answer.Status < 400 || answer.Status > 599):
		return in, answer, errors.New("x12 271: standard input is neither an eligibility answer (no \"eligible\") nor an error answer (a 4xx or 5xx status: give -status, pipe `curl -i`, or a body with \"status\")")
	}
	return in, answer, nil
}

// curlHead splits `curl -i` output into the status of its last response
// (an interim 100 Continue, or a proxy's 200 Connection established,
// comes first) and the body; input that does not start with a status
// line is all body, status 0.
func curlHead(raw []byte) (int, []byte, error) {
	status := 0
	rest := bytes.TrimLeft(raw, " \t\r\n")
	for bytes.HasPrefix(rest, []byte("HTTP/")) {
		head, body, ok := bytes.Cut(rest, []byte("\n\r\n"))
		if !ok {
			if head, body, ok = bytes.Cut(rest, []byte("\n\n")); !ok {
				return 0, nil, errors.New("x12 271: the status line and headers have no blank line after them")
			}
		}
		line, _, _ := bytes.Cut(head, []byte("\n"))
		fields := strings.Fields(string(line))
		n := 0
		if len(fields) >= 2 {
			n, _ = strconv.Atoi(fields[1])
		}
		if n < 100 || n > 599 {
			return 0, nil, fmt.Errorf("x12 271: %q is not an HTTP status line", strings.TrimSpace(string(line)))
		}
		status, rest = n, body
	}
	return status, rest, nil
}

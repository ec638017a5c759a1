package server

// OpenAPI of POST /api/v1/eligibility/x12: the 270 and 271 as text, and
// the CAQH CORE envelope's fields, with examples made by the x12 package
// itself (a real 270 and the 271 that answers the example decision).

import (
	"encoding/json"
	"time"

	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/x12"
	"github.com/healthagents/healthagents/x12/core"
)

// exampleX12Request is a 270 asking about the example patient's MRI of the
// brain (HC:70551) on the day of the example decision (exampleStatement).
const exampleX12Request = "ISA*00*          *00*          *ZZ*CLEARINGHOUSE  *ZZ*HEALTHAGENTS   *261125*1000*^*00501*000000101*0*T*:~\n" +
	"GS*HS*CLEARINGHOUSE*HEALTHAGENTS*20261125*1000*101*X*005010X279A1~\n" +
	"ST*270*0001*005010X279A1~\nBHT*0022*13*10001234*20261125*1000~\n" +
	"HL*1**20*1~\nNM1*PR*2*ACME HEALTH*****PI*60054~\n" +
	"HL*2*1*21*1~\nNM1*1P*2*BONE AND JOINT CLINIC*****XX*1234567893~\n" +
	"HL*3*2*22*0~\nTRN*1*93175-012547*9877281234~\nNM1*IL*1*DOE*JANE****MI*W123456789~\nDMG*D8*19680402~\nDTP*291*D8*20261125~\nEQ**HC:70551~\n" +
	"SE*13*0001~\nGE*1*101~\nIEA*1*000000101~\n"

// exampleX12Answer is the 271 answering exampleX12Request with the example
// decision.
func exampleX12Answer() string {
	inq, err := x12.Read270([]byte(exampleX12Request))
	if err != nil {
		panic(err) // our own example always reads
	}
	res := ExampleDecision()
	js, err := json.Marshal(res.Statement)
	if err != nil {
		panic(err)
	}
	text, err := x12.EncodeStatement(js)
	if err != nil {
		panic(err)
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC) // the example decision's day
	src := inq.Transactions[0].Sources[0]
	rcv := src.Receivers[0]
	sub := rcv.Subscribers[0]
	met := res.DeductibleMet
	resp := x12.Response{Reference: inq.Transactions[0].Reference, Sources: []x12.SourceAnswer{{Party: src.Party, Receivers: []x12.ReceiverAnswer{{Party: rcv.Party,
		Subscribers: []x12.SubscriberAnswer{{MemberAnswer: x12.MemberAnswer{Traces: sub.Traces, MemberID: sub.ID, ServiceDate: at,
			Coverage: x12.CoverageActive, DeductibleMet: &met, Benefits: []x12.Benefit{{
				Procedure: "70551", Eligible: res.Eligible, CoveragePercentage: res.CoveragePercentage, RequiresAuthorization: res.RequiresAuthorization,
				CopayAmount: res.CopayAmount, ProofTransaction: res.VerificationProof.BlockchainTx, Statement: text}}}}}}}}}}
	out, err := x12.Render271s(inq, x12.Reply{Control: 4711, Time: at}, []x12.Response{resp})
	if err != nil {
		panic(err)
	}
	return string(out)
}

var (
	x12RequestSchema = &openapi.Schema{
		Type:        openapi.Types{"string"},
		Description: "An ASC X12 interchange of 005010X279A1 270 transaction sets, with the separators its ISA declares (line breaks after segment terminators are ignored).",
		Examples:    []any{exampleX12Request},
	}
	x12ResponseSchema = &openapi.Schema{
		Type:        openapi.Types{"string"},
		Description: "One X12 interchange: 005010X279A1 271s (one per 270 transaction set), or the 999 (005010X231A1) or TA1 refusing the 270. Separators: * element, : component, ^ repetition, ~ segment (each segment on its own line).",
		Examples:    []any{exampleX12Answer()},
	}
	coreFields = map[string]*openapi.Schema{
		"ProcessingMode":  {Type: openapi.Types{"string"}, Enum: []any{core.RealTime}},
		"PayloadID":       {Type: openapi.Types{"string"}, Format: "uuid", Description: "The request's id; the answer carries it back."},
		"TimeStamp":       {Type: openapi.Types{"string"}, Format: "date-time"},
		"SenderID":        {Type: openapi.Types{"string"}, MaxLength: ptrInt(1024)},
		"ReceiverID":      {Type: openapi.Types{"string"}, MaxLength: ptrInt(1024)},
		"CORERuleVersion": {Type: openapi.Types{"string"}, Enum: []any{core.RuleVersions[0], core.RuleVersions[1], core.RuleVersions[2]}},
	}
	coreRequestSchema = &openapi.Schema{
		Type:        openapi.Types{"object"},
		Description: "The CAQH CORE connectivity envelope (HTTP MIME multipart), real time. Other parts (UserName, Password) are ignored: the API key authenticates.",
		Properties: withFields(coreFields, map[string]*openapi.Schema{
			"PayloadType": {Type: openapi.Types{"string"}, Enum: []any{core.PayloadType270}},
			"Payload":     {Type: openapi.Types{"string"}, Description: "The 270 interchange."},
		}),
		Required: []string{"CORERuleVersion", "Payload", "PayloadID", "PayloadType", "ProcessingMode", "ReceiverID", "SenderID", "TimeStamp"},
		Examples: []any{map[string]any{
			"PayloadType": core.PayloadType270, "ProcessingMode": core.RealTime, "PayloadID": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
			"TimeStamp": "2026-11-25T10:00:00Z", "SenderID": "CLEARINGHOUSE", "ReceiverID": "HEALTHAGENTS", "CORERuleVersion": "2.2.0",
			"Payload": exampleX12Request,
		}},
	}
	coreResponseSchema = &openapi.Schema{
		Type:        openapi.Types{"object"},
		Description: "The same envelope, answering: the request's PayloadID and CORERuleVersion, SenderID and ReceiverID swapped, ErrorCode Success and the X12 answer in Payload; or PayloadType CoreEnvelopeError (status 400) with ErrorCode naming the field (PayloadIDRequired, ProcessingModeNotSupported, PayloadTypeNotSupported, VersionMismatch, ...).",
		Properties: withFields(coreFields, map[string]*openapi.Schema{
			"PayloadType":  {Type: openapi.Types{"string"}, Enum: []any{core.PayloadType271, core.PayloadType999, core.PayloadTypeTA1, core.PayloadTypeError}},
			"Payload":      {Type: openapi.Types{"string"}, Description: "The 271, 999 or TA1."},
			"ErrorCode":    {Type: openapi.Types{"string"}},
			"ErrorMessage": {Type: openapi.Types{"string"}},
		}),
		Required: []string{"ErrorCode", "PayloadType", "ProcessingMode", "TimeStamp"},
		Examples: []any{map[string]any{
			"PayloadType": core.PayloadType271, "ProcessingMode": core.RealTime, "PayloadID": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
			"TimeStamp": "2026-11-25T10:00:01Z", "SenderID": "HEALTHAGENTS", "ReceiverID": "CLEARINGHOUSE", "CORERuleVersion": "2.2.0",
			"Payload": exampleX12Answer(), "ErrorCode": core.Success, "ErrorMessage": "None",
		}},
	}
)

func withFields(a, b map[string]*openapi.Schema) map[string]*openapi.Schema {
	out := map[string]*openapi.Schema{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func ptrInt(n int) *int { return &n }

package x12

import "strings"

// serviceTypeCodes are the service type codes (X12 element 1365) that
// 005010X279A1 allows in EQ01: an EQ01 outside them is a syntax error (a
// 999 naming EQ01, IK403 7).
var serviceTypeCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`1 10 11 12 13 14 15 16 17 18 19 2 20 21 22 23 24 25 26 27 28 3 30 32 33 34 35
		36 37 38 39 4 40 41 42 43 44 45 46 47 48 49 5 50 51 52 53 54 55 56 57 58 59 6 60 61 62 63 64 65 66 67 68
		69 7 70 71 72 73 74 75 76 77 78 79 8 80 81 82 83 84 85 86 87 88 89 9 90 91 92 93 94 95 96 97 98 99 A0 A1
		A2 A3 A4 A5 A6 A7 A8 A9 AA AB AC AD AE AF AG AH AI AJ AK AL AM AN AO AQ AR B1 B2 B3 BA BB BC BD BE BF BG
		BH BI BJ BK BL BM BN BP BQ BR BS BT BU BV BW BX BY BZ C1 CA CB CC CD CE CF CG CH CI CJ CK CL CM CN CO CP
		CQ DG DM DS GF GN GY IC MH NI ON PT PU RN RT TC TN UC`) {
		m[c] = true
	}
	return m
}()

// PlanCoverage is service type 30, Health Benefit Plan Coverage: the plan
// itself, answered with its status and every class of the catalogue.
const PlanCoverage = "30"

// ServiceType is one row of the table that maps a service type code onto
// the procedure catalogue (docs/x12.md).
type ServiceType struct {
	Code, Name string
	// Procedures are the catalogue classes the service type asks about,
	// each decided (and proven) on its own.
	Procedures []string
}

// serviceTypes is the table: the service types this service answers.
// Every other valid code is answered EB*V (cannot process) by name.
var serviceTypes = []ServiceType{
	{PlanCoverage, "Health Benefit Plan Coverage", []string{"PROC001", "PROC002", "PROC003", "PROC004", "PROC005"}},
	{"2", "Surgical", []string{"PROC005"}},
	{"4", "Diagnostic X-Ray", []string{"PROC002"}},
	{"5", "Diagnostic Lab", []string{"PROC004"}},
	{"62", "MRI/CAT Scan", []string{"PROC001", "PROC003"}},
}

// ServiceTypes returns the table mapping service type codes onto the
// procedure catalogue's classes.
func ServiceTypes() []ServiceType {
	out := make([]ServiceType, len(serviceTypes))
	for i, st := range serviceTypes {
		st.Procedures = append([]string(nil), st.Procedures...)
		out[i] = st
	}
	return out
}

// ProceduresOf returns the catalogue classes service type code asks about,
// and false for a code the table does not map.
func ProceduresOf(code string) ([]string, bool) {
	for _, st := range serviceTypes {
		if st.Code == code {
			return append([]string(nil), st.Procedures...), true
		}
	}
	return nil, false
}

// ServiceTypeOf is the service type an answer about a catalogue class
// names in EB03 when the question was service type 30: the table's first
// row, after 30, that asks about the class.
func ServiceTypeOf(class string) string {
	for _, st := range serviceTypes[1:] {
		for _, p := range st.Procedures {
			if p == class {
				return st.Code
			}
		}
	}
	return PlanCoverage
}

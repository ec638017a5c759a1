package zkp

import (
	"fmt"
	"math/big"
	"sort"
	"sync"

	"github.com/healthagents/healthagents/eligibility"
)

// procedureRow is one entry of the public procedure catalogue compiled into
// the eligibility-v3 circuit: a code, and the class it belongs to. The
// circuit selects exactly one row for the requested code, so the code, its
// class and the class's terms are constrained to one another.
type procedureRow struct {
	code      string
	codeField *big.Int // credential.StringField(code)
	class     eligibility.Class
	classCode *big.Int // credential.StringField(class.Code)
}

type procedureCatalogue struct {
	version string
	rows    []procedureRow // by code
	byCode  map[string]int
	// table: keys the code fields; columns class code, base percent,
	// pre-authorisation.
	table *lookupTable
}

var (
	catalogueOnce sync.Once
	catalogueV2   *procedureCatalogue
	catalogueErr  error
)

// eligibilityCatalogue is the embedded catalogue of package eligibility
// (every catalogued code, class codes included), as the circuit sees it.
// Every code is its own canonical and case-folded form (checked here), so
// one field element serves exact and case-insensitive comparisons alike.
func eligibilityCatalogue() (*procedureCatalogue, error) {
	catalogueOnce.Do(func() {
		agent, err := eligibility.New()
		if err != nil {
			catalogueErr = err
			return
		}
		procs := agent.Procedures()
		sort.Slice(procs, func(i, j int) bool { return procs[i].Code < procs[j].Code })
		c := &procedureCatalogue{version: agent.Version(), byCode: make(map[string]int, len(procs))}
		for _, p := range procs {
			if p.Code != CanonicalCode(p.Code) || p.Code != foldCase(p.Code) {
				catalogueErr = fmt.Errorf("zkp: catalogue code %q is not in canonical, case-folded form", p.Code)
				return
			}
			code, err := codeField("procedure", p.Code)
			if err != nil {
				catalogueErr = err
				return
			}
			class, err := codeField("class", p.Class.Code)
			if err != nil {
				catalogueErr = err
				return
			}
			c.byCode[p.Code] = len(c.rows)
			c.rows = append(c.rows, procedureRow{code: p.Code, codeField: code, class: p.Class, classCode: class})
		}
		keys := make([]*big.Int, len(c.rows))
		cols := [3][]*big.Int{}
		for i, r := range c.rows {
			keys[i] = r.codeField
			cols[0] = append(cols[0], r.classCode)
			cols[1] = append(cols[1], big.NewInt(int64(r.class.BaseCoverage)))
			cols[2] = append(cols[2], big.NewInt(int64(boolInt(r.class.PreAuth))))
		}
		c.table = newLookupTable(keys, cols[0], cols[1], cols[2])
		catalogueV2 = c
	})
	return catalogueV2, catalogueErr
}

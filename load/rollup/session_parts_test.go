package rollup

import (
	"reflect"
	"slices"
	"testing"
)

// The parts of a session in several partitions combine to its aggregates
// only if each arg_min and arg_max rule names, as at, a rule that keeps the
// least (arg_min) or greatest (arg_max) of its by over the rows whose arg
// is not NULL: the rows the arg_min or arg_max itself reads.
func TestSessionPartRulesCombine(t *testing.T) {
	for _, rules := range [][]partRule{sessionMessageRules, sessionExchangeRules} {
		for _, r := range rules {
			want, ok := map[aggKind]aggKind{aggArgMin: aggMin, aggArgMax: aggMax}[r.agg]
			if !ok {
				if r.at != "" {
					t.Errorf("%s: at %q on an aggregate that is not arg_min or arg_max", r.name, r.at)
				}
				continue
			}
			i := slices.IndexFunc(rules, func(a partRule) bool { return a.name == r.at })
			if i < 0 {
				t.Errorf("%s: at %q names no rule", r.name, r.at)
				continue
			}
			a := rules[i]
			if a.agg != want || a.arg != r.by || !reflect.DeepEqual(a.where, append(slices.Clone(r.where), notNull(r.arg))) {
				t.Errorf("%s: at %s is not the %v of %s over the rows of %s: %+v", r.name, a.name, want, r.by, r.arg, a)
			}
		}
	}
}

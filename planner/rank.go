package planner

import (
	"slices"
	"sort"
	"strings"

	"github.com/capstan-dev/capstan"
)

// Rank orders the accepted candidates in place (Rank 1, 2, ...), marks the
// first selected, explains the others, and returns the selected index or -1.
// Preference: existing resources before scenarios, direct providers before
// implied ones, then by key so that the choice is reproducible.
func Rank(vs []capstan.CandidateVerdict) int {
	var idx []int
	for i := range vs {
		vs[i].Selected, vs[i].Rank = false, 0
		if vs[i].Accepted {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return -1
	}
	sort.SliceStable(idx, func(a, b int) bool { return better(&vs[idx[a]], &vs[idx[b]]) })
	best := idx[0]
	for pos, i := range idx {
		vs[i].Rank = pos + 1
		if i == best {
			vs[i].Selected = true
			vs[i].Reason = "selected: meets every constraint and policy and ranks first"
		} else {
			vs[i].Reason = "accepted but ranked below " + vs[best].Ref + " (" + whyBelow(&vs[i], &vs[best]) + ")"
		}
	}
	return best
}

func better(a, b *capstan.CandidateVerdict) bool {
	if (a.Kind == capstan.CandidateResource) != (b.Kind == capstan.CandidateResource) {
		return a.Kind == capstan.CandidateResource
	}
	if len(a.Via) != len(b.Via) {
		return len(a.Via) < len(b.Via)
	}
	return a.Ref < b.Ref
}

func whyBelow(v, best *capstan.CandidateVerdict) string {
	switch {
	case v.Kind != best.Kind:
		return "an existing provider is preferred to creating one"
	case len(v.Via) != len(best.Via):
		return "a direct provider is preferred to an implied one"
	default:
		return "equal fit; ties break by key"
	}
}

func failedChecks(cs []capstan.ConstraintCheck) string {
	var out []string
	for _, c := range cs {
		if !c.Passed {
			out = append(out, c.Reason)
		}
	}
	return strings.Join(out, "; ")
}

func failedPolicies(ps []capstan.PolicyVerdict) string {
	var out []string
	for _, p := range ps {
		if !p.Passed {
			out = append(out, p.Reason)
		}
	}
	return strings.Join(out, "; ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

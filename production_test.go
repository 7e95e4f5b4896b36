package capstan_test

import (
	"testing"

	"github.com/capstan-dev/capstan"
)

func TestProductionEnvironments(t *testing.T) {
	declared := capstan.DeclareProduction("live", " PRD ")
	for _, tc := range []struct {
		p    capstan.ProductionEnvironments
		env  string
		want bool
	}{
		{capstan.ProductionEnvironments{}, "prod", true},
		{capstan.ProductionEnvironments{}, "production", true},
		{capstan.ProductionEnvironments{}, "Production", true},
		{capstan.ProductionEnvironments{}, " prod ", true},
		{capstan.ProductionEnvironments{}, "staging", false},
		{capstan.ProductionEnvironments{}, "", false},
		{declared, "live", true},
		{declared, "prd", true},
		{declared, "LIVE", true},
		{declared, "prod", false},
		{declared, "production", false},
	} {
		if got := tc.p.Is(tc.env); got != tc.want {
			t.Errorf("%v.Is(%q) = %v, want %v", tc.p.Names(), tc.env, got, tc.want)
		}
	}
}

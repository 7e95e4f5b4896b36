package shard

import (
	"testing"
	"time"
)

func TestOutlasts(t *testing.T) {
	term := 15 * time.Second // a retry after 1 s, each call at most 3 s
	until := time.Date(2026, 12, 3, 12, 0, 15, 0, time.UTC)
	for _, c := range []struct {
		name string
		left time.Duration // from now until the lease runs out
		want bool
	}{
		{"just renewed", 15 * time.Second, false},
		{"room for another attempt", 5 * time.Second, false},
		{"the next attempt would end just before", 4*time.Second + time.Millisecond, false},
		{"the next attempt could end as it runs out", 4 * time.Second, true},
		{"one second left", time.Second, true},
		{"already run out", -time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Outlasts(until.Add(-c.left), until, term); got != c.want {
				t.Fatalf("outlasts with %v left = %v, want %v", c.left, got, c.want)
			}
		})
	}
}

package shard_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/shard"
)

func TestShardOf(t *testing.T) {
	counts := make([]int, shard.Shards)
	for i := range 16000 {
		id := fmt.Sprintf("op-%d", i)
		s := shard.ShardOf(id)
		require.Equal(t, s, shard.ShardOf(id), "stable")
		counts[s]++
	}
	for s, n := range counts {
		require.InDelta(t, 1000, n, 150, "shard %d holds %d of 16000", s, n)
	}
	require.Equal(t, "shard-07", shard.ShardKey(7))
}

func TestQuota(t *testing.T) {
	for _, c := range []struct {
		members []string
		holder  string
		want    int
	}{
		{[]string{"a"}, "a", 16},
		{[]string{"a", "b"}, "b", 8},
		{[]string{"a", "b", "c"}, "a", 6},
		{[]string{"a", "b", "c"}, "c", 5},
		{[]string{"a", "b"}, "z", 0},
	} {
		require.Equal(t, c.want, shard.Quota(c.members, c.holder), "%v %s", c.members, c.holder)
	}
}

// leases builds the leases of shards 0..15 from their holders ("" free,
// "~x" x's but expired).
func leases(now time.Time, holders ...string) []capstan.LeaseHolder {
	var out []capstan.LeaseHolder
	for i, h := range holders {
		l := capstan.LeaseHolder{Key: shard.ShardKey(i), ID: h, Until: now.Add(time.Minute)}
		if len(h) > 0 && h[0] == '~' {
			l.ID, l.Until = h[1:], now.Add(-time.Second)
		}
		out = append(out, l)
	}
	return out
}

func repeat(h string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = h
	}
	return out
}

func span(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		members []string
		holder  string
		leases  []capstan.LeaseHolder
		want    shard.Claims
	}{
		{"alone on a new database: every shard", []string{"a"}, "a", nil, shard.Claims{Claim: span(0, 15)}},
		{"alone, holding all: keeps them", []string{"a"}, "a", leases(now, repeat("a", 16)...), shard.Claims{Claim: span(0, 15)}},
		{"a joins b's database: nothing free, waits", []string{"a", "b"}, "a", leases(now, repeat("b", 16)...), shard.Claims{}},
		{"b sees a joined: gives up its upper half", []string{"a", "b"}, "b", leases(now, repeat("b", 16)...),
			shard.Claims{Claim: span(0, 7), GiveUp: span(8, 15)}},
		{"a takes what b released", []string{"a", "b"}, "a", leases(now, append(repeat("b", 8), repeat("", 8)...)...),
			shard.Claims{Claim: span(8, 15)}},
		{"a dead member's expired shards are free", []string{"b"}, "b", leases(now, append(repeat("b", 8), repeat("~a", 8)...)...),
			shard.Claims{Claim: span(0, 15)}},
		{"not yet expired: not free", []string{"b"}, "b", leases(now, append(repeat("b", 8), repeat("a", 8)...)...),
			shard.Claims{Claim: span(0, 7)}},
		{"its own expired lease is still its own", []string{"a"}, "a", leases(now, repeat("~a", 16)...), shard.Claims{Claim: span(0, 15)}},
		{"three members, the third starts at a third", []string{"a", "b", "c"}, "c", leases(now, append(repeat("a", 6), repeat("b", 5)...)...),
			shard.Claims{Claim: span(11, 15)}},
		{"over quota, the other below its own: gives up the highest", []string{"a", "b"}, "a", leases(now, append(repeat("a", 10), repeat("b", 6)...)...),
			shard.Claims{Claim: span(0, 7), GiveUp: span(8, 9)}},
		{"over quota: gives up only what the free ones leave room for", []string{"a", "b"}, "a", leases(now, append(repeat("a", 10), repeat("", 6)...)...),
			shard.Claims{Claim: span(0, 7), GiveUp: span(8, 9)}},
		{"over quota, the free ones fill the room: keeps all", []string{"a", "b"}, "a", leases(now, append(repeat("a", 8), repeat("", 8)...)...),
			shard.Claims{Claim: span(0, 7)}},
		{"not a member yet: claims nothing", []string{"b"}, "a", nil, shard.Claims{}},
		{"a shard abandoned past the limit: one more, beyond the quota", []string{"a", "b"}, "a",
			append(leases(now, repeat("a", 8)...), capstan.LeaseHolder{Key: shard.ShardKey(9), Until: now.Add(-2 * time.Hour)}, capstan.LeaseHolder{Key: shard.ShardKey(10), Until: now.Add(-2 * time.Hour)}),
			shard.Claims{Claim: append(span(0, 7), 9)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := shard.Decide(c.members, c.holder, c.leases, now, time.Hour)
			require.Equal(t, c.want, got)
		})
	}
}

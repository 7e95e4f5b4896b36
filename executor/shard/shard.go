package shard

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/capstan-dev/capstan"
)

// Shards is how many shards a database's operations fall into: the unit
// of ownership among executors (own.go). Every executor on one database
// must agree on it, so it is fixed; 16 spreads the work over up to 16
// replicas.
const Shards = 16

// ShardOf is the shard an operation belongs to, from its id alone.
func ShardOf(opID string) int {
	h := fnv.New32a()
	h.Write([]byte(opID))
	return int(h.Sum32() % Shards)
}

// ShardKey names a shard's lease.
func ShardKey(shard int) string { return fmt.Sprintf("shard-%02d", shard) }

// OfKey is the shard a lease key names, or -1.
func OfKey(key string) int {
	var i int
	if _, err := fmt.Sscanf(key, "shard-%02d", &i); err != nil || i < 0 || i >= Shards || ShardKey(i) != key {
		return -1
	}
	return i
}

// Quota is holder's fair share of the shards among members (sorted, holder
// among them): Shards/len(members), and one more for the first
// Shards%len(members) of them. It is 0 for one that is not a member.
func Quota(members []string, holder string) int {
	k := slices.Index(members, holder)
	if k < 0 {
		return 0
	}
	q := Shards / len(members)
	if k < Shards%len(members) {
		q++
	}
	return q
}

// Claims is what an executor asks of the shard leases at one renewal.
type Claims struct {
	// Claim are the leases to take or extend: the shards it keeps and
	// the free ones it takes up to its quota.
	Claim []int
	// GiveUp are shards it holds beyond its quota while another member
	// is below its own: it drains and releases them.
	GiveUp []int
}

// Decide is the ownership decision of holder at a renewal, from the live
// members (sorted) and every shard's lease as read at now. Shards stay
// where they are while their holders are within their quotas (a member
// joining or leaving moves only what it must); a member below its quota
// takes free shards (never held, released, or expired), starting at a
// point of its own so that members do not race for the same ones; one
// above it gives its highest-numbered shards up, only while another
// member has room for them.
//
// A shard free for longer than abandoned (a member that announces itself
// but never claims its share) is taken by any member, one per renewal,
// whatever its quota: no shard stays unowned.
func Decide(members []string, holder string, leases []capstan.LeaseHolder, now time.Time, abandoned time.Duration) Claims {
	quota := Quota(members, holder)
	holders := map[int]string{}
	var stale []int
	for _, l := range leases {
		i := OfKey(l.Key)
		if i < 0 {
			continue
		}
		if l.ID == "" || (l.ID != holder && l.Until.Before(now)) {
			if abandoned > 0 && slices.Contains(members, holder) && l.Until.Before(now.Add(-abandoned)) {
				stale = append(stale, i)
			}
			continue // free
		}
		holders[i] = l.ID
	}
	var mine, free []int
	for i := range Shards {
		switch holders[i] {
		case holder:
			mine = append(mine, i)
		case "":
			free = append(free, i)
		}
	}
	var c Claims
	if len(mine) > quota {
		// The others fill the free shards first; only room beyond those
		// is room for this one's.
		if room := roomElsewhere(members, holder, holders) - len(free); room > 0 {
			n := min(len(mine)-quota, room)
			c.GiveUp = append(c.GiveUp, mine[len(mine)-n:]...)
			mine = mine[:len(mine)-n]
		}
	}
	c.Claim = append(c.Claim, mine...)
	if want := quota - len(mine); want > 0 && len(free) > 0 {
		start := slices.Index(members, holder) * Shards / max(1, len(members))
		slices.SortFunc(free, func(a, b int) int { return (a-start+Shards)%Shards - (b-start+Shards)%Shards })
		c.Claim = append(c.Claim, free[:min(want, len(free))]...)
	}
	for _, i := range stale {
		if !slices.Contains(c.Claim, i) {
			c.Claim = append(c.Claim, i)
			break
		}
	}
	slices.Sort(c.Claim)
	return c
}

// roomElsewhere counts the shards the other members could still take
// within their quotas.
func roomElsewhere(members []string, holder string, holders map[int]string) int {
	held := map[string]int{}
	for _, h := range holders {
		held[h]++
	}
	room := 0
	for _, m := range members {
		if m != holder {
			room += max(0, Quota(members, m)-held[m])
		}
	}
	return room
}

package capstan

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NewID returns a new identifier: 12 hex digits of milliseconds followed by
// 16 hex digits, so identifiers sort by creation time. The 16 digits are
// random for the first identifier of a millisecond and count up from there
// for the next ones (as ULID's monotonic mode does), so identifiers made in
// one process sort in the order they were made even within a millisecond —
// lists ordered by id are in creation order.
func NewID() string {
	ms, n := ids.next(time.Now().UnixMilli())
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(ms)) // 48 bits used: the last 6 bytes
	binary.BigEndian.PutUint64(raw[8:], n)
	return hex.EncodeToString(raw[2:])
}

// idClock hands out (millisecond, sequence) pairs that only grow.
type idClock struct {
	mu     sync.Mutex
	ms     int64
	random uint64
}

var ids idClock

// next returns the millisecond to stamp and the 64 bits after it: random
// when the clock moved on, the previous ones plus one otherwise (also when
// the clock went back, so an identifier never sorts before an earlier one).
func (c *idClock) next(now int64) (int64, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now > c.ms {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.ms, c.random = now, binary.BigEndian.Uint64(b[:])>>1 // room to count up
		return c.ms, c.random
	}
	c.random++
	if c.random == 0 { // 2^63 identifiers in one millisecond: borrow the next
		c.ms++
	}
	return c.ms, c.random
}

var keyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.\-]{0,127}$`)

// ValidKey reports whether s is a valid domain key: lower case letters, digits,
// '.', '_' and '-', starting with a letter or digit, at most 128 characters.
// Organization ids, capability keys, scenario ids and resource names are keys.
func ValidKey(s string) bool { return keyPattern.MatchString(s) }

// CheckOrg is a store's refusal of an organization id that is not a key
// (EINVALID), before it reads or writes anything: both stores say it so.
func CheckOrg(org string) error {
	if !ValidKey(org) {
		return Errorf(EINVALID, "organization %q is not a valid key", org)
	}
	return nil
}

var semverPattern = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.\-]+)?(\+[0-9A-Za-z.\-]+)?$`)

// ValidSemver reports whether s is a semantic version (MAJOR.MINOR.PATCH with
// optional pre-release and build metadata).
func ValidSemver(s string) bool { return semverPattern.MatchString(s) }

// CompareSemver compares two valid semantic versions: -1, 0 or 1. A
// pre-release sorts before its release; build metadata is ignored.
func CompareSemver(a, b string) int {
	ma, mb := semverPattern.FindStringSubmatch(a), semverPattern.FindStringSubmatch(b)
	if ma == nil || mb == nil {
		return strings.Compare(a, b)
	}
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(ma[i])
		y, _ := strconv.Atoi(mb[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch pa, pb := ma[4], mb[4]; {
	case pa == pb:
		return 0
	case pa == "":
		return 1
	case pb == "":
		return -1
	default:
		return strings.Compare(pa, pb)
	}
}

// SplitRef splits id@version; version is "" for a bare id.
func SplitRef(ref string) (id, version string) {
	if i := strings.LastIndexByte(ref, '@'); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

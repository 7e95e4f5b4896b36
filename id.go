package capstan

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// NewID returns a new identifier: 12 hex digits of milliseconds followed by
// 16 random hex digits, so identifiers sort by creation time.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	ms := strconv.FormatInt(time.Now().UnixMilli(), 16)
	for len(ms) < 12 {
		ms = "0" + ms
	}
	return ms + hex.EncodeToString(b[:])
}

var keyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.\-]{0,127}$`)

// ValidKey reports whether s is a valid domain key: lower case letters, digits,
// '.', '_' and '-', starting with a letter or digit, at most 128 characters.
// Organization ids, capability keys, scenario ids and resource names are keys.
func ValidKey(s string) bool { return keyPattern.MatchString(s) }

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

// Package netguard classifies addresses the control plane must not reach
// on a user's word: the host's own and the cloud's (loopback, link-local
// where metadata services answer, the metadata addresses outside it,
// unspecified, multicast), and private networks. The egress allow-list
// (local.Egress) and the catalog's address check (sshaccess) ask it,
// so the rule is written once.
package netguard

import (
	"net/netip"
	"slices"
)

// metadata are cloud metadata and platform addresses outside the
// link-local ranges (Alibaba, AWS IPv6, GCP IPv6, Azure's wire server).
var metadata = []netip.Addr{netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("fd20:ce::254"), netip.MustParseAddr("168.63.129.16")}

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	compatible = netip.MustParsePrefix("::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
)

// Embedded is the IPv4 address an IPv6 one carries (mapped, NAT64 — the
// well-known prefix and the local-use /48 of RFC 8215 —, IPv4-compatible,
// 6to4), or the address itself.
func Embedded(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if !a.Is6() {
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), compatible.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case nat64Local.Contains(a): // RFC 6052's /48 layout: bits 48–63 and 72–87, around the u octet
		return netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]})
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}

// Sensitive says why an address is the host's or the cloud's own, or ""
// when it is not: loopback, link-local (metadata), a metadata address,
// unspecified, multicast — itself or the IPv4 address it carries.
func Sensitive(a netip.Addr) string {
	for _, x := range []netip.Addr{a.Unmap(), Embedded(a)} {
		switch {
		case slices.Contains(metadata, x):
			return "a cloud metadata service's address"
		case x.IsLoopback():
			return "a loopback address (the control plane's own host)"
		case x.IsLinkLocalUnicast(), x.IsLinkLocalMulticast():
			return "a link-local address (where a cloud's metadata service answers)"
		case x.IsUnspecified():
			return "the unspecified address"
		case x.IsMulticast(), x.IsInterfaceLocalMulticast():
			return "a multicast address"
		}
	}
	return ""
}

// Internal reports a private network's address (RFC 1918, ULA, CGNAT),
// itself or the IPv4 address it carries.
func Internal(a netip.Addr) bool {
	for _, x := range []netip.Addr{a.Unmap(), Embedded(a)} {
		if x.IsPrivate() || cgnat.Contains(x) {
			return true
		}
	}
	return false
}

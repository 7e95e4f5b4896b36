package netguard

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSensitive(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"10.0.0.1", false},
		{"8.8.8.8", false},
		{"127.0.0.1", true},
		{"169.254.169.254", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::a9fe:a9fe", true},       // NAT64 of the metadata address
		{"64:ff9b:1:a9fe:a9:fe00::", true}, // local-use NAT64 (/48): 169.254.169.254 around the u octet
		{"::a9fe:a9fe", true},              // IPv4-compatible
		{"2002:a9fe:a9fe::1", true},        // 6to4
		{"::1", true},
		{"::", true},
		{"100.100.100.200", true},
		{"fd00:ec2::254", true},
		{"2001:db8::1", false},
	} {
		require.Equal(t, c.want, Sensitive(netip.MustParseAddr(c.addr)) != "", c.addr)
	}
	require.True(t, Internal(netip.MustParseAddr("::a00:1")), "IPv4-compatible 10.0.0.1")
}

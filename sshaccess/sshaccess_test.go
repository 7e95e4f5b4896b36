package sshaccess

import (
	"crypto/ed25519"
	"crypto/rand"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

func TestAddress(t *testing.T) {
	allowMetadata := func(a netip.Addr) bool { return a == netip.MustParseAddr("169.254.169.254") }
	for _, c := range []struct {
		v       string
		allowed func(netip.Addr) bool
		refused string
	}{
		{v: "10.20.30.41"},
		{v: "2001:db8::1"},
		{v: "h1"},
		{v: "node-1.prod.example.com"},
		{v: "169.254.169.254", refused: "link-local"},
		{v: "169.254.169.254", allowed: allowMetadata},
		{v: "169.254.1.1", allowed: allowMetadata, refused: "link-local"},
		{v: "fe80::1", refused: "link-local"},
		{v: "fe80::1%eth0", refused: "zone"},
		{v: "fd00:ec2::254", refused: "metadata"},
		{v: "100.100.100.200", refused: "metadata"},
		{v: "::ffff:169.254.169.254", refused: "link-local"},
		{v: "0.0.0.0", refused: "unspecified"},
		{v: "239.1.1.1", refused: "multicast"},
		{v: "127.0.0.1", refused: "loopback"},
		{v: "64:ff9b::a9fe:a9fe", refused: "link-local"},
		{v: "10.20.30.41.", refused: "RFC 1123"},
		{v: "h1;$(id)", refused: "RFC 1123"},
		{v: "-oProxyCommand=id", refused: "RFC 1123"},
		{v: "h1 -oProxyCommand=id", refused: "RFC 1123"},
		{v: "h1\nansible_connection=local", refused: "RFC 1123"},
		{v: "{{ lookup('pipe','id') }}", refused: "RFC 1123"},
		{v: "", refused: "1 to 253"},
		{v: strings.Repeat("a", 254), refused: "1 to 253"},
		{v: "999.1.1.1", refused: "looks like an IP"},
		{v: "-h1", refused: "RFC 1123"},
	} {
		err := Address(c.v, c.allowed)
		if c.refused == "" {
			require.NoError(t, err, c.v)
			continue
		}
		require.ErrorContains(t, err, c.refused, c.v)
	}
}

func TestPortAndUser(t *testing.T) {
	require.NoError(t, Port(22))
	require.NoError(t, Port(65535))
	require.ErrorContains(t, Port(0), "between 1 and 65535")
	require.ErrorContains(t, Port(99999), "between 1 and 65535")
	for _, ok := range []string{"root", "deploy", "_svc", "ci-runner1"} {
		require.NoError(t, User(ok), ok)
	}
	for _, bad := range []string{"", "root ansible_connection=local", "Root", "-oProxyCommand", "a b", "root\n", "{{x}}", "r$", strings.Repeat("a", 33)} {
		require.ErrorContains(t, User(bad), "portable user name", bad)
	}
}

func TestHostKeys(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	key, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))

	keys, err := HostKeys(line + " host1 comment\n\n" + line + "\r\n")
	require.NoError(t, err)
	require.Equal(t, []string{line, line}, keys, "canonical: the comment is dropped")

	for _, c := range []struct{ text, refused string }{
		{"ssh-ed25519", "type base64"},
		{"ssh-ed25519 !!!notbase64", "authorized_keys"},
		{`command="id" ` + line, "without options"},
		{"@cert-authority * " + line, "authorized_keys"},
		{"* " + line, "without options"},
		{"10.0.0.1 " + line, "without options"},
		{strings.Repeat(line+"\n", MaxHostKeys+1), "at most"},
	} {
		_, err := HostKeys(c.text)
		require.ErrorContains(t, err, c.refused, c.text)
	}
	_, err = HostKey(line + "\n* " + line)
	require.ErrorContains(t, err, "one line")
}

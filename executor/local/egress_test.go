package local_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/executor/probe"
)

func TestEgressAllows(t *testing.T) {
	e, err := local.ParseEgress([]string{"10.0.0.0/8", "192.0.2.7", "api.example.com", "*.corp.example", "127.0.0.1/32"})
	require.NoError(t, err)
	tests := []struct {
		host, addr string
		ok         bool
	}{
		{"anything", "10.1.2.3", true},
		{"anything", "192.0.2.7", true},
		{"anything", "192.0.2.8", false},
		{"api.example.com", "203.0.113.5", true},
		{"API.Example.com.", "203.0.113.5", true},
		{"evil.example.com", "203.0.113.5", false},
		{"x.corp.example", "198.51.100.1", true},
		{"corp.example", "198.51.100.1", false},
		{"api.example.com", "169.254.169.254", false}, // a listed name pointing at the metadata address
		{"api.example.com", "127.0.0.2", false},
		{"api.example.com", "::1", false},
		{"api.example.com", "fe80::1", false},
		{"api.example.com", "100.100.100.200", false},
		{"api.example.com", "0.0.0.0", false},
		{"localhost", "127.0.0.1", true}, // listed by CIDR
		{"anything", "::ffff:10.0.0.1", true},
		{"api.example.com", "10.1.2.3", true},            // a private address a CIDR lists
		{"api.example.com", "192.168.1.10", false},       // a listed name rebound to a private address
		{"api.example.com", "fd12::1", false},            // ULA
		{"api.example.com", "fd20:ce::254", false},       // GCP metadata
		{"api.example.com", "168.63.129.16", false},      // Azure
		{"api.example.com", "64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"api.example.com", "2002:a9fe:a9fe::1", false},  // 6to4 of it
	}
	for _, tc := range tests {
		err := e.Allows(tc.host, netip.MustParseAddr(tc.addr))
		require.Equal(t, tc.ok, err == nil, "%s (%s): %v", tc.host, tc.addr, err)
		if err != nil {
			require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))
		}
	}
	_, err = local.ParseEgress([]string{"10.0.0.0/33", "[bad", "host:80"})
	require.Error(t, err)
	everything, err := local.ParseEgress([]string{"0.0.0.0/0", "::/0"})
	require.NoError(t, err)
	require.NoError(t, everything.Allows("x", netip.MustParseAddr("203.0.113.9")))
	require.Error(t, everything.Allows("x", netip.MustParseAddr("169.254.169.254")), "0.0.0.0/0 does not list the metadata address")
	require.Error(t, everything.Allows("x", netip.MustParseAddr("::1")))
	none, err := local.ParseEgress(nil)
	require.NoError(t, err)
	require.Error(t, none.Allows("api.example.com", netip.MustParseAddr("203.0.113.5")), "an empty list allows nothing")
}

// TestEgressOverHTTP: probes and http jobs dial only what the list
// allows, redirects included, and a body is never inlined into evidence.
func TestEgressOverHTTP(t *testing.T) {
	var inner *httptest.Server
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, strings.Replace(inner.URL, "127.0.0.1", "127.0.0.2", 1)+"/metrics", http.StatusFound)
		default:
			fmt.Fprint(w, "TOKEN-LIKE-BODY status: degraded")
		}
	}))
	defer outer.Close()
	inner = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "INTERNAL METRICS") }))
	inner.Listener.Close()
	var err error
	inner.Listener, err = netListen("127.0.0.2:0")
	require.NoError(t, err)
	inner.Start()
	defer inner.Close()

	allowed, err := local.ParseEgress([]string{"127.0.0.1/32"})
	require.NoError(t, err)
	p := probe.Prober{Client: allowed.Client()}

	result, source, body := p.Run(context.Background(), capstan.Probe{Type: "http", URL: outer.URL + "/health", OutputPattern: "status: ok"}, job.ProbeTarget{})
	require.Equal(t, capstan.EvidenceFailed, result)
	require.NotContains(t, fmt.Sprint(source), "TOKEN-LIKE-BODY", "the body is not in the evidence")
	require.Equal(t, false, source["matched"])
	require.Contains(t, string(body), "TOKEN-LIKE-BODY", "it is returned to be kept as a diagnostics artifact")

	result, source, body = p.Run(context.Background(), capstan.Probe{Type: "http", URL: outer.URL + "/redirect"}, job.ProbeTarget{})
	require.Equal(t, capstan.EvidenceFailed, result)
	require.Contains(t, source["error"], "not in the allow-list", "%v", source)
	require.NotContains(t, string(body), "INTERNAL METRICS")

	res := local.HTTPRunner{Client: allowed.Client()}.Run(context.Background(), job.Job{NodeID: "call", Spec: capstan.RunSpec{URL: inner.URL + "/metrics", Method: http.MethodGet}})
	require.Error(t, res.Err)
	require.Equal(t, "http", res.ErrKind)
	require.Contains(t, res.Err.Error(), "not in the allow-list")
}

func netListen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

package kubeaccess_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/kubeaccess"
)

func TestAPIServer(t *testing.T) {
	loopback := func(a netip.Addr) bool { return a.IsLoopback() }
	for _, tc := range []struct {
		url   string
		allow func(netip.Addr) bool
		err   string
	}{
		{url: "https://k8s.example.com:6443"},
		{url: "https://10.0.0.5"},
		{url: "https://127.0.0.1:6443", allow: loopback},
		{url: "https://127.0.0.1:6443", err: "loopback"},
		{url: "https://169.254.169.254", allow: loopback, err: "refused"},
		{url: "http://k8s.example.com", err: "not https"},
		{url: "https://user:pw@k8s.example.com", err: "nothing more"},
		{url: "https://k8s.example.com/api?x=1", err: "nothing more"},
		{url: "https://-oProxyCommand=x", err: "host name"},
		{url: "", err: "empty"},
		{url: "https://k8s.example.com:99999", err: "port"},
	} {
		err := kubeaccess.APIServer(tc.url, tc.allow)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("APIServer(%q) = %v, want %q", tc.url, err, tc.err)
		}
	}
}

func TestCA(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	privateKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	for _, tc := range []struct{ name, ca, err string }{
		{name: "one", ca: cert},
		{name: "a bundle", ca: cert + cert},
		{name: "empty", ca: "", err: "not PEM"},
		{name: "a key", ca: privateKey, err: "only certificates"},
		{name: "garbage after", ca: cert + "junk", err: "not PEM"},
		{name: "not DER", ca: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", err: "ca:"},
	} {
		err := kubeaccess.CA(tc.ca)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: CA = %v, want %q", tc.name, err, tc.err)
		}
	}
}

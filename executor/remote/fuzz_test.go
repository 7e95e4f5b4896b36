package remote_test

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/sshaccess"
)

// FuzzInventory: whatever user and port a catalog holds, the inventory
// is valid JSON of one host, "target", whose variables are exactly the
// five the runner sets, with the user and port as given — or it is
// refused; never a second host, never a variable the input chose.
func FuzzInventory(f *testing.F) {
	for _, s := range []string{"root", "root ansible_connection=local", "a\nlocalhost ansible_connection=local", "{{ lookup('pipe','id') }}", `x","ansible_connection":"local`} {
		f.Add(s, 22)
	}
	f.Fuzz(func(t *testing.T, user string, port int) {
		data, err := remote.Inventory(netip.MustParseAddr("10.0.0.2"), port, user)
		if err != nil {
			if sshaccess.User(user) == nil && sshaccess.Port(port) == nil {
				t.Fatalf("a valid user %q and port %d refused: %v", user, port, err)
			}
			return
		}
		var inv struct {
			All struct {
				Hosts map[string]map[string]any `json:"hosts"`
			} `json:"all"`
		}
		if err := json.Unmarshal(data, &inv); err != nil {
			t.Fatalf("not JSON: %v: %s", err, data)
		}
		if len(inv.All.Hosts) != 1 || inv.All.Hosts["target"] == nil {
			t.Fatalf("not one host named target: %s", data)
		}
		vars := inv.All.Hosts["target"]
		if len(vars) != 5 || vars["ansible_user"] != user || vars["ansible_connection"] != "ssh" || vars["ansible_host"] != "10.0.0.2" {
			t.Fatalf("variables the input chose: %s", data)
		}
		if strings.ContainsAny(user, "{}% \n") {
			t.Fatalf("a templating or spacing user passed: %q", user)
		}
	})
}

// FuzzKnownHosts: whatever host keys a catalog holds, the known_hosts
// file has one line per key, each "host type base64", the host the
// target's and nothing else — or it is refused.
func FuzzKnownHosts(f *testing.F) {
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ+pLwnnC0cXYtKxYG6AUsu8hdH4x8GYNannH9UOjCnF"
	for _, s := range []string{key, key + " comment", key + "\n* " + key, "@cert-authority * " + key, "10.0.0.9 " + key, key + "\r\n"} {
		f.Add(s, 2222)
	}
	f.Fuzz(func(t *testing.T, k string, port int) {
		data, err := remote.KnownHosts(netip.MustParseAddr("10.0.0.2"), port, []string{k})
		if err != nil {
			return
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != 1 {
			t.Fatalf("one key made %d lines: %q", len(lines), data)
		}
		fields := strings.Fields(lines[0])
		host := "[10.0.0.2]:" + strings.TrimSpace(strings.TrimPrefix(fields[0], "[10.0.0.2]:"))
		if port == 22 {
			host = "10.0.0.2"
		}
		if len(fields) != 3 || fields[0] != host || !strings.HasPrefix(fields[2], "AAAA") {
			t.Fatalf("not host type base64: %q", lines[0])
		}
	})
}

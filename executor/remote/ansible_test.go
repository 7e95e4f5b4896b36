package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

const playbook = `- hosts: target
  gather_facts: false
  tasks:
    - name: write the file
      ansible.builtin.copy:
        dest: "{{ lookup('env', 'CAPSTAN_PARAM_PATH') }}"
        content: "written by ansible\n"
        mode: "0640"
`

// TestAnsibleRunner runs a playbook with Debian's ansible-playbook on a
// real host: the change happens and its recap is evidence; --check
// changes nothing; a host key that is not pinned stops it.
func TestAnsibleRunner(t *testing.T) {
	hosts := testhosts.Start(t, 2)
	var data []byte
	allow, err := executor.ParseEgress([]string{"10.0.0.0/8"})
	require.NoError(t, err)
	r := remote.AnsibleRunner{Egress: allow}
	run := func(target *executor.Target, path string, check bool) executor.Result {
		return r.Run(context.Background(), executor.Job{NodeID: "play", Target: target, Env: map[string]string{"CAPSTAN_PARAM_PATH": path},
			Spec: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: playbook, Check: check, Timeout: "2m"}})
	}
	res := run(targetOf(hosts, 0), "/srv/ansible.txt", false)
	require.NoError(t, res.Err, "%s", res.Output)
	data, err = os.ReadFile(filepath.Join(hosts.Hosts[0].Root, "srv", "ansible.txt"))
	require.NoError(t, err)
	require.Equal(t, "written by ansible\n", string(data))
	require.Len(t, res.Evidence, 1)
	require.Equal(t, capstan.EvidencePassed, res.Evidence[0].Result)
	require.Equal(t, 1, res.Evidence[0].Source["changed"])
	require.Equal(t, "compute.node/h1", res.Evidence[0].Source["host"])

	res = run(targetOf(hosts, 0), "/srv/dry.txt", true)
	require.NoError(t, res.Err, "%s", res.Output)
	require.Equal(t, 1, res.Evidence[0].Source["changed"], "the dry run says what it would change")
	_, err = os.Stat(filepath.Join(hosts.Hosts[0].Root, "srv", "dry.txt"))
	require.True(t, os.IsNotExist(err), "--check changed nothing")

	wrong := targetOf(hosts, 0)
	wrong.HostKeys = []string{hosts.Hosts[1].HostKey}
	res = run(wrong, "/srv/mitm.txt", false)
	require.Equal(t, executor.ErrKindHostKey, res.ErrKind, "%v\n%s", res.Err, res.Output)
	_, err = os.Stat(filepath.Join(hosts.Hosts[0].Root, "srv", "mitm.txt"))
	require.True(t, os.IsNotExist(err))
	require.NotContains(t, string(res.Output), string(hosts.ClientKey), "the key is never shown")

	none, err := executor.ParseEgress(nil)
	require.NoError(t, err)
	res = remote.AnsibleRunner{Egress: none}.Run(context.Background(), executor.Job{NodeID: "play", Target: targetOf(hosts, 0),
		Spec: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: playbook}})
	require.Equal(t, remote.KindUnreachable, res.ErrKind)
	require.Contains(t, res.Err.Error(), "not in the allow-list")
}

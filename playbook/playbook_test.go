package playbook

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name, text, refused string
	}{
		{name: "the target", text: "- hosts: target\n  tasks:\n    - ansible.builtin.copy: {dest: /srv/x, content: \"{{ ansible_hostname }}\"}\n"},
		{name: "all is the target", text: "- hosts: all\n  become: true\n  tasks: [{ansible.builtin.ping: {}}]\n"},
		{name: "ssh connection", text: "- hosts: target\n  connection: ssh\n  tasks: []\n"},
		{name: "delegate_to localhost", text: "- hosts: target\n  tasks:\n    - command: id\n      delegate_to: localhost\n", refused: "delegates a task"},
		{name: "delegate_to templated", text: "- hosts: target\n  tasks:\n    - command: id\n      delegate_to: \"{{ 'local' ~ 'host' }}\"\n", refused: "delegates a task"},
		{name: "escaped key", text: "- hosts: target\n  tasks:\n    - command: id\n      \"delegate\\x5fto\": localhost\n", refused: "delegates a task"},
		{name: "local_action", text: "- hosts: target\n  tasks:\n    - local_action: command id\n", refused: "runs a task on the controller"},
		{name: "connection local", text: "- hosts: target\n  connection: local\n  tasks: []\n", refused: "only ssh"},
		{name: "hosts localhost", text: "- hosts: localhost\n  tasks: []\n", refused: "must be target"},
		{name: "hosts 127.0.0.1", text: "- hosts: 127.0.0.1\n  tasks: []\n", refused: "must be target"},
		{name: "no hosts", text: "- tasks: []\n", refused: "names no hosts"},
		{name: "vars ansible_connection", text: "- hosts: target\n  vars: {ansible_connection: local}\n  tasks: []\n", refused: "ansible_connection chooses"},
		{name: "set_fact free form", text: "- hosts: target\n  tasks:\n    - set_fact: ansible_connection=local\n", refused: "ansible_connection chooses"},
		{name: "add_host", text: "- hosts: target\n  tasks:\n    - ansible.builtin.add_host: {name: x}\n", refused: "adds a host"},
		{name: "through an alias", text: "- hosts: target\n  vars: &v {ansible_host: 127.0.0.1}\n  tasks:\n    - {command: id, vars: *v}\n", refused: "ansible_host chooses"},
		{name: "import_playbook", text: "- import_playbook: /etc/other.yml\n", refused: "imports another playbook"},
		{name: "legacy add_host", text: "- hosts: target\n  tasks:\n    - ansible.legacy.add_host: {name: localhost}\n", refused: "adds a host"},
		{name: "group_by", text: "- hosts: target\n  tasks:\n    - group_by: {key: x}\n", refused: "builds groups"},
		{name: "action: add_host", text: "- hosts: target\n  tasks:\n    - action: add_host name=localhost ansible_connection=local\n", refused: "adds a host"},
		{name: "a templated fact name", text: "- hosts: target\n  tasks:\n    - set_fact: {\"{{ 'ansible_conn' ~ 'ection' }}\": local}\n", refused: "named by a template"},
		{name: "scp extra args", text: "- hosts: target\n  vars: {ansible_scp_extra_args: '-o ProxyCommand=id'}\n  tasks: []\n", refused: "ansible_scp_extra_args chooses"},
		{name: "include_vars", text: "- hosts: target\n  tasks:\n    - include_vars: /etc/x.yml\n", refused: "reads variables from a file"},
		{name: "include_tasks", text: "- hosts: target\n  tasks:\n    - include_tasks: fetched.yml\n", refused: "a playbook is one file"},
		{name: "roles", text: "- hosts: target\n  roles: [evil]\n", refused: "a playbook is one file"},
		{name: "delegation in a block", text: "- hosts: target\n  tasks:\n    - block:\n        - {command: id, delegate_to: localhost}\n", refused: "delegates a task"},
		{name: "delegation merged in", text: "- hosts: target\n  tasks:\n    - &d {command: id}\n    - {<<: {delegate_to: localhost}, command: id}\n", refused: "delegates a task"},
		{name: "reads the host's address", text: "- hosts: target\n  tasks:\n    - debug: {msg: \"{{ ansible_host }} as {{ ansible_user }}\"}\n"},
		{name: "a key named connection in a module's arguments", text: "- hosts: target\n  vars: {route: {group_by: [alertname]}, db: {connection: local}}\n  tasks:\n    - template: {src: x, dest: /etc/y}\n"},
		{name: "a task named after a keyword", text: "- hosts: target\n  tasks:\n    - name: no delegate_to and no local_action here\n      command: id\n"},
		{name: "hosts as a list of one", text: "- hosts: [target]\n  tasks: []\n"},
		{name: "not a list", text: "hosts: target\n", refused: "a list of plays"},
		{name: "not YAML", text: "- hosts: [target\n", refused: "not YAML"},
		{name: "too large", text: strings.Repeat("#", MaxSize+1), refused: "more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.text)
			if c.refused == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
			require.Contains(t, err.Error(), c.refused)
		})
	}
}

func TestProblemsOf(t *testing.T) {
	bad := "- hosts: target\n  tasks: [{command: id, delegate_to: localhost}]\n"
	nodes := []capstan.PlanNode{
		{ID: "fine", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "ansible", Playbook: "- hosts: target\n  tasks: []\n"}}},
		{ID: "shell", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "shell", Script: "delegate_to"}}},
		{ID: "play", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "ansible", Playbook: bad}}},
		{ID: "undo", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"},
			Controls: capstan.JobControls{Rollback: capstan.RollbackPolicy{Compensation: &capstan.RunSpec{Runner: "ansible", Playbook: bad}}}}},
	}
	got := ProblemsOf(nodes)
	require.Len(t, got, 2)
	require.Contains(t, got[0], "node play: playbook runs on the controller")
	require.Contains(t, got[1], "node undo:")
}

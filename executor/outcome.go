package executor

import (
	"fmt"
	"strings"

	"github.com/capstan-dev/capstan"
)

// Verdict judges a job or verification attempt: "" when it succeeded,
// otherwise why not and the error kind for the retry policy. A job
// succeeds only when it ran cleanly and every evidence item passed; a
// contract that declares no evidence cannot succeed (invariant 5).
func Verdict(res Result, evidence []capstan.Evidence) (reason, errKind string) {
	if res.Err != nil {
		return res.Err.Error(), res.ErrKind
	}
	if len(evidence) == 0 {
		return "no evidence: an exit code alone is not success (invariant 5)", "evidence"
	}
	var failed []string
	for _, e := range evidence {
		if e.Result != capstan.EvidencePassed {
			failed = append(failed, fmt.Sprintf("%s %s", e.Item, e.Result))
		}
	}
	if len(failed) > 0 {
		return "evidence did not pass: " + strings.Join(failed, ", "), "evidence"
	}
	return "", ""
}

// Outcome returns the operation's final status once its nodes decide it:
// succeeded when every node is done, failed when a node failed with no
// retry left and no one to wait for; "" while it goes on.
func Outcome(p *capstan.Plan, status map[string]capstan.NodeRunStatus) capstan.OperationStatus {
	all := true
	for _, n := range p.Nodes {
		if n.Type == capstan.NodeStage {
			continue
		}
		if !done(status[n.ID]) {
			all = false
		}
	}
	if all {
		return capstan.OperationSucceeded
	}
	return ""
}

// Waiting reports whether some node waits for a person (approval,
// intervention, or attention after its last attempt).
func Waiting(status map[string]capstan.NodeRunStatus) bool {
	for _, s := range status {
		switch s {
		case capstan.NodeWaitingApproval, capstan.NodeWaitingIntervention, capstan.NodeFailed:
			return true
		}
	}
	return false
}

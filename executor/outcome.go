package executor

import (
	"fmt"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// Verdict judges a job or verification attempt: "" when it succeeded,
// otherwise why not and the error kind for the retry policy. A job
// succeeds only when it ran cleanly and every evidence item passed; a
// contract that declares no evidence cannot succeed (invariant 5).
func Verdict(res job.Result, evidence []capstan.Evidence) (reason, errKind string) {
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

package helm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
)

// result is a step's outcome: one JSON line of output, and the release's
// state as evidence, passed when the step did what it meant to, failed
// when it did not (an install or upgrade undone by its own rollback is
// failed evidence of the step, and passed evidence of the rollback).
func result(j job.Job, out Outcome, err error) job.Result {
	line, _ := json.Marshal(out)
	output := append(line, '\n')
	if err == nil {
		ev := evidenceOf(j, out, capstan.EvidencePassed)
		if out.objects != nil && out.Action != "uninstalled" && out.Action != "absent" {
			ev.Source[capstan.AppliedSource] = out.objects // the release's objects now: what drift compares
		}
		return job.Result{ExitCode: 0, Output: output, Evidence: []capstan.Evidence{ev}}
	}
	return failed(j, &out, err)
}

func failed(j job.Job, out *Outcome, err error) job.Result {
	kind := kube.ErrKindUnavailable
	var ke *kube.Error
	switch {
	case errors.As(err, &ke):
		kind = ke.Kind
	case strings.Contains(err.Error(), "template: "), strings.Contains(err.Error(), "parse error"):
		// The chart does not render (Helm's engine: text/template, without
		// env and expandenv): another attempt renders it the same.
		kind = kube.ErrKindInvalid
		err = capstan.Errorf(capstan.EINVALID, "%s", err.Error())
	case strings.Contains(err.Error(), "context deadline exceeded"), strings.Contains(err.Error(), "timed out"):
		kind = kube.ErrKindTimeout
	default:
		if typed := kube.Classify(j.Target.Cluster.Server, "helm", err); errors.As(typed, &ke) {
			kind = ke.Kind
			err = typed
		}
	}
	res := job.Result{ExitCode: -1, ErrKind: kind, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	if out != nil {
		line, _ := json.Marshal(out)
		res.Output = append(append(line, '\n'), []byte("error: "+err.Error()+"\n")...)
		if out.Action == "failed-then-rolled-back" || out.Action == "failed-then-uninstalled" {
			// The step failed; what its rollback left is proven as such.
			res.Evidence = []capstan.Evidence{evidenceOf(j, *out, capstan.EvidencePassed)}
		}
	}
	return res
}

func evidenceOf(j job.Job, out Outcome, result string) capstan.Evidence {
	source := map[string]any{"type": "helm", "cluster": j.Target.Cluster.Server, "target": j.Target.Resource,
		"release": out.Release, "namespace": out.Namespace, "action": out.Action}
	if out.Revision != 0 {
		source["revision"] = out.Revision
	}
	for k, v := range map[string]string{"status": out.Status, "chart": out.Chart, "manifest_sha256": out.ManifestSHA256} {
		if v != "" {
			source[k] = v
		}
	}
	return capstan.Evidence{OperationID: j.OperationID, ProducedBy: j.NodeID, Item: "release-" + out.Release + "-" + out.Action,
		Result: result, Source: source, ObservedAt: time.Now().UTC()}
}

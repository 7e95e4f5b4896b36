package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// Runner runs `s3` jobs: it makes the bucket the job's spec names on the
// store its target is, unless it exists (a re-run finds it and makes
// nothing). All of it within the job's timeout and its executor's window.
type Runner struct {
	Dial Dialer
}

// Run runs one attempt. Its output is one JSON line, its evidence one
// item (bucket-<name>-created or -exists).
func (r Runner) Run(ctx context.Context, j job.Job) job.Result {
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	ctx, stop := job.WithinDeadline(ctx, j.Deadline)
	defer stop()
	if j.Target == nil || j.Target.Store == nil {
		return job.Result{ExitCode: -1, ErrKind: job.ErrKindTarget, Err: fmt.Errorf("job %s: target %q is not an object store (an object_storage.s3 resource with an endpoint)", j.NodeID, j.Spec.Target)}
	}
	bucket, err := bucketName(j.Spec.Bucket, j.Env)
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: ErrKindInvalid, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	store := j.Target.Store
	client, err := connect(store, r.Dial)
	if err != nil {
		return failed(j, err)
	}
	action := "exists"
	found, err := client.BucketExists(ctx, bucket)
	if err != nil {
		return failed(j, classify(store.Endpoint, "reading bucket "+bucket, err))
	}
	if !found {
		if job.Closed(j.Deadline) {
			return job.Result{ExitCode: -1, ErrKind: job.ErrKindLease, Err: fmt.Errorf("job %s: the executor's lease ran out before it was renewed: no bucket made", j.NodeID)}
		}
		err := client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
		if code := minio.ToErrorResponse(err).Code; code == "BucketAlreadyOwnedByYou" {
			err = nil // made meanwhile by an attempt cut short: ours
		}
		if err != nil {
			return failed(j, classify(store.Endpoint, "making bucket "+bucket, err))
		}
		action = "created"
	}
	line, _ := json.Marshal(map[string]string{"endpoint": store.Endpoint, "bucket": bucket, "action": action})
	return job.Result{ExitCode: 0, Output: append(line, '\n'), Evidence: []capstan.Evidence{{OperationID: j.OperationID, ProducedBy: j.NodeID,
		Item: "bucket-" + bucket + "-" + action, Result: capstan.EvidencePassed, ObservedAt: time.Now().UTC(),
		Source: map[string]any{"type": "s3", "endpoint": store.Endpoint, "target": j.Target.Resource, "bucket": bucket, "action": action}}}}
}

func failed(j job.Job, err error) job.Result {
	kind := ErrKindUnavailable
	var e *Error
	if errors.As(err, &e) {
		kind = e.Kind
	}
	return job.Result{ExitCode: -1, Output: []byte("error: " + err.Error() + "\n"), ErrKind: kind, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
}

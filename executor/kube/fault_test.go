package kube_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubecluster"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

// TestTheRunnerMeetsAClusterInTrouble runs the runner against a cluster
// of the test's own whose parts fail for real: the API server killed
// (SIGKILL) as soon as the step's object is stored (while its apply
// answers, or while the step waits: either way the step ends bound, the
// first by a retry that finds the object applied), and down when a step
// applies; etcd
// stalled (SIGSTOP); the step's token revoked. Each ends typed, within
// the step's timeout, and the step succeeds once the part is back.
func TestTheRunnerMeetsAClusterInTrouble(t *testing.T) {
	t.Parallel()
	c := kubetest.Private(t, kubecluster.Options{Nodes: []string{"worker-1"}, PullFails: []string{}})
	ns := c.Namespace(t, "faults")
	token := c.Token(t, ns, workloads, nil)
	r := kube.Runner{Dial: loopback(t)}
	ctx := context.Background()
	claim := func(name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s}\nspec: {accessModes: [ReadWriteOnce], storageClassName: %s, resources: {requests: {storage: 1Gi}}}\n", name, name)
	}
	config := func(name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: v}\n", name)
	}

	t.Run("the API server killed while a step applies or waits", func(t *testing.T) {
		j := kubeJob(c, token, ns, claim("waiting"), nil)
		done := make(chan job.Result, 1)
		go func() { done <- r.Run(ctx, j) }()
		c.ClaimStored(t, ns, "waiting") // stored: the step is in its apply's answer, or waits for a volume
		c.Own.KillAPIServer()
		if err := c.Own.StartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		c.Volume(t, "waiting") // the claim can be bound now
		res := <-done
		if res.Err != nil {
			// The kill cut the apply's answer: the attempt fails typed,
			// and the retry reads the object, finds it applied, and
			// writes nothing.
			if res.ErrKind != kube.ErrKindUnavailable {
				live, err := c.Admin.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "waiting", metav1.GetOptions{})
				t.Fatalf("an apply cut short: %s %v, want unavailable; the cluster says %v %v\ncontroller manager:\n%s", res.ErrKind, res.Err, live.Status.Phase, err, c.Own.LogTail("kube-controller-manager", 15))
			}
			res = r.Run(ctx, j)
			if a := applied(t, res); res.Err != nil || a[0].Action != "unchanged" {
				t.Fatalf("the retry after an apply cut short: %v %+v, want unchanged", res.Err, a)
			}
		}
		if a := applied(t, res); a[0].Ready != "phase Bound" {
			live, err := c.Admin.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "waiting", metav1.GetOptions{})
			t.Fatalf("claim = %+v (%v); the cluster says %v %v\ncontroller manager:\n%s", a, res.Err, live.Status.Phase, err, c.Own.LogTail("kube-controller-manager", 15))
		}
	})

	t.Run("a watch too old to resume", func(t *testing.T) {
		// The step waits on a watch; the API server goes, etcd's history is
		// compacted past the watch's resourceVersion, the API server comes
		// back: the resumed watch is answered 410 Gone, and the wait lists
		// again and goes on, within the step.
		j := kubeJob(c, token, ns, claim("compacted"), nil)
		done := make(chan job.Result, 1)
		go func() { done <- r.Run(ctx, j) }()
		c.ClaimStored(t, ns, "compacted")
		c.ObjectWatched(t, "", "v1", "persistentvolumeclaims") // the step waits on its watch now
		c.Own.KillAPIServer()
		rev, err := c.Own.CompactEtcd(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Own.StartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		c.Volume(t, "compacted")
		res := <-done
		if a := applied(t, res); res.Err != nil || a[0].Ready != "phase Bound" {
			t.Fatalf("after a compaction at revision %d: %v %+v", rev, res.Err, a)
		}
		if v, _ := strconv.ParseInt(applied(t, res)[0].ResourceVersion, 10, 64); v <= rev {
			t.Fatalf("the claim found bound at resourceVersion %d, not after the compaction at %d", v, rev)
		}
	})

	t.Run("the API server down when a step applies", func(t *testing.T) {
		c.Own.KillAPIServer()
		j := kubeJob(c, token, ns, config("while-down"), nil)
		j.Spec.Timeout = "5s"
		res := r.Run(ctx, j)
		if res.ErrKind != kube.ErrKindUnavailable || capstan.ErrorCode(res.Err) != capstan.EUNAVAILABLE {
			t.Fatalf("result = %s %v, want unavailable", res.ErrKind, res.Err)
		}
		if err := c.Own.StartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		again := r.Run(ctx, j) // the retry
		if a := applied(t, again); again.Err != nil || a[0].Action != "created" {
			t.Fatalf("the retry: %v %+v", again.Err, a)
		}
	})

	t.Run("etcd stalled", func(t *testing.T) {
		c.Own.StopEtcd()
		j := kubeJob(c, token, ns, config("etcd-stalled"), nil)
		j.Spec.Timeout = "3s"
		start := time.Now()
		res := r.Run(ctx, j)
		c.Own.ResumeEtcd()
		if res.Err == nil || (res.ErrKind != kube.ErrKindTimeout && res.ErrKind != kube.ErrKindUnavailable) {
			t.Fatalf("result = %s %v, want a timeout or unavailable", res.ErrKind, res.Err)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Fatalf("the step took %s past a 3s timeout", took)
		}
		if again := r.Run(ctx, kubeJob(c, token, ns, config("etcd-stalled"), nil)); again.Err != nil {
			t.Fatalf("after etcd resumed: %v", again.Err)
		}
	})

	t.Run("a token revoked", func(t *testing.T) {
		other := c.Namespace(t, "revoked")
		doomed := c.Token(t, other, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "patch"}}}, nil)
		if res := r.Run(ctx, kubeJob(c, doomed, other, config("before"), nil)); res.Err != nil {
			t.Fatalf("with its token: %v", res.Err)
		}
		if err := c.Admin.CoreV1().ServiceAccounts(other).Delete(ctx, "capstan-runner", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The API server learns of the deletion through its own cache:
		// ask it (TokenReview) until it refuses the token.
		refused := func() bool {
			tr, err := c.Admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: doomed}}, metav1.CreateOptions{})
			return err == nil && !tr.Status.Authenticated
		}
		deadline := time.Now().Add(30 * time.Second)
		for !refused() {
			if time.Now().After(deadline) {
				t.Fatal("the API server still takes the token of a deleted ServiceAccount")
			}
			time.Sleep(50 * time.Millisecond) // the API server's cache gives no sign
		}
		res := r.Run(ctx, kubeJob(c, doomed, other, config("after"), nil))
		if res.ErrKind != kube.ErrKindUnauthorized || capstan.ErrorCode(res.Err) != capstan.EFORBIDDEN || !strings.Contains(res.Err.Error(), "credentials were refused") {
			t.Fatalf("result = %s %v, want unauthorized", res.ErrKind, res.Err)
		}
	})
}

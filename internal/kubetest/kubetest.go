// Package kubetest gives tests the run's Kubernetes test cluster
// (internal/kubecluster): the one CAPSTAN_KUBECONFIG names (make test
// starts it once, through withcluster), or one this test process starts
// the first time a test asks and Main stops. A test that needs a cluster
// and cannot have one fails with the reason; it is never skipped.
//
// Tests share the cluster, so each works in namespaces of its own
// (Namespace) and never changes what another test may read: a test that
// stops a node or the API server starts a cluster of its own (Private).
package kubetest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-dev/capstan/internal/kubecluster"
)

// Cluster is a test cluster as tests reach it.
type Cluster struct {
	Kubeconfig string
	// Server is the API server's URL, CA its authority (PEM).
	Server string
	CA     []byte
	// Admin is an administrator's client (group system:masters).
	Admin *kubernetes.Clientset
	// Own is set when the cluster is this test's or process's to stop,
	// fault tests reach its processes through it.
	Own *kubecluster.Cluster
}

var (
	shared     *Cluster
	sharedErr  error
	sharedOnce sync.Once
)

// Shared is the run's cluster.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	sharedOnce.Do(func() {
		if kc := os.Getenv("CAPSTAN_KUBECONFIG"); kc != "" {
			shared, sharedErr = fromKubeconfig(kc, nil)
			return
		}
		c, err := kubecluster.Start(context.Background(), kubecluster.Options{})
		if err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = fromKubeconfig(c.Kubeconfig, c)
	})
	if sharedErr != nil {
		t.Fatalf("the Kubernetes test cluster is part of the test suite and is not available: %v", sharedErr)
	}
	return shared
}

// Main runs a package's tests and stops the cluster Shared started, if
// it started one: call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil && shared.Own != nil {
		shared.Own.Stop()
	}
	return code
}

// Private starts a cluster of the test's own, stopped when it ends: for
// tests that stop its parts or change its nodes.
func Private(t testing.TB, opts kubecluster.Options) *Cluster {
	t.Helper()
	c, err := kubecluster.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting a test cluster of the test's own: %v", err)
	}
	t.Cleanup(c.Stop)
	out, err := fromKubeconfig(c.Kubeconfig, c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fromKubeconfig(path string, own *kubecluster.Cluster) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Kubeconfig: path, Server: cfg.Host, CA: cfg.CAData, Admin: admin, Own: own}, nil
}

// Namespace creates a namespace for the test alone (its name starts with
// prefix), deleted when the test ends.
func (c *Cluster) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	name := prefix + "-" + suffix()
	ctx := context.Background()
	if _, err := c.Admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = c.Admin.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// Token makes a ServiceAccount in namespace ns bound to a Role with rules
// there (and to a ClusterRole with clusterRules, when any), and returns a
// token of it valid for an hour: the identity a pack's RBAC gives the
// runner.
func (c *Cluster) Token(t testing.TB, ns string, rules, clusterRules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	name := "capstan-runner"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := c.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}
	if len(rules) > 0 {
		if _, err := c.Admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}}
		if _, err := c.Admin.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(clusterRules) > 0 {
		crName := ns + "-" + name
		if _, err := c.Admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: crName}, Rules: clusterRules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: crName}, Subjects: subject, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: crName}}
		if _, err := c.Admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.Admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), crName, metav1.DeleteOptions{})
			_ = c.Admin.RbacV1().ClusterRoles().Delete(context.Background(), crName, metav1.DeleteOptions{})
		})
	}
	hour := int64(time.Hour / time.Second)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// Config is a client configuration with token, as the runner's would be.
func (c *Cluster) Config(token string) *rest.Config {
	return &rest.Config{Host: c.Server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CA}}
}

func suffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}

// OtherCA is a certificate authority no test cluster uses (PEM): pinned
// on a cluster, it makes that cluster one Capstan must refuse.
func OtherCA(t testing.TB) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not-the-cluster"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// Volume makes a 1 GiB volume of storage class class, which a claim of
// that class binds; it is deleted when the test ends.
func (c *Cluster) Volume(t testing.TB, class string) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: class + "-pv"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName:       class,
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + class}},
	}}
	if _, err := c.Admin.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Admin.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
}

// ClaimStored waits, on a watch, until the claim exists, and returns it.
func (c *Cluster) ClaimStored(t testing.TB, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := c.Admin.CoreV1().PersistentVolumeClaims(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan(): // the first event: it exists (a watch from no version lists it)
		claim, ok := ev.Object.(*corev1.PersistentVolumeClaim)
		if !ok {
			t.Fatalf("watching claim %s: %v", name, ev)
		}
		return claim
	case <-ctx.Done():
		t.Fatalf("claim %s never appeared", name)
		return nil
	}
}

// TestNodeTaint taints the nodes tests add (Node): only a pod that
// tolerates it (TestNodeToleration) is scheduled there, so that the
// other tests' pods never land on a node a test makes NotReady, drains
// or removes.
const TestNodeTaint = "capstan.dev/test-node"

// TestNodeToleration is the toleration, in a pod spec's YAML, of a node
// of a test's own.
const TestNodeToleration = "tolerations: [{key: " + TestNodeTaint + ", operator: Exists, effect: NoSchedule}]"

// Node adds a node kwok plays, named prefix-<random>, with labels beside
// its own and TestNodeTaint, waits until it is Ready, and removes it when
// the test ends: a node of the test's own, to make NotReady, drain or
// remove without touching the nodes other tests schedule on.
func (c *Cluster) Node(t testing.TB, prefix string, labels map[string]string) string {
	t.Helper()
	name := prefix + "-" + suffix()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kubecluster.AddNode(ctx, c.Admin, name, labels, corev1.Taint{Key: TestNodeTaint, Value: name, Effect: corev1.TaintEffectNoSchedule}); err != nil {
		t.Fatalf("adding node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if err := kubecluster.WaitNodeReady(ctx, c.Admin, name, true); err != nil {
		t.Fatalf("node %s: %v", name, err)
	}
	return name
}

// ObjectWatched waits until the API server serves a watch of one object
// of resource (group "" for the core group; scope "resource": a step's
// watch, by name, where the cluster's controllers watch cluster-wide),
// read from its apiserver_longrunning_requests gauge: a fault test cuts
// the watch only once it is there.
func (c *Cluster) ObjectWatched(t testing.TB, group, version, resource string) {
	t.Helper()
	want := `apiserver_longrunning_requests{component="apiserver",group="` + group + `",resource="` + resource + `",scope="resource",subresource="",verb="WATCH",version="` + version + `"} `
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		body, err := c.Admin.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
		if err == nil {
			for _, line := range strings.Split(string(body), "\n") {
				if n, ok := strings.CutPrefix(line, want); ok && n != "0" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no watch of one of the %s within 30 s (%v)", resource, err)
		}
		<-tick.C
	}
}

package kubecluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writePKI writes the CA, the API server's serving certificate, the
// service account keys, a client certificate and kubeconfig for each
// component and one for an administrator, and kwok's stages.
func (c *Cluster) writePKI(pullFails []string) error {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	ca, err := newAuthority()
	if err != nil {
		return err
	}
	c.CA = ca.certPEM
	caKey, err := ca.keyPEM()
	if err != nil {
		return err
	}
	serving, err := ca.issue("kube-apiserver", nil, true,
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return err
	}
	saKey, saPub, err := serviceAccountKey()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"ca.crt": ca.certPEM, "ca.key": caKey,
		"apiserver.crt": serving.cert, "apiserver.key": serving.key,
		"sa.key": saKey, "sa.pub": saPub,
	}
	for _, id := range []struct{ file, user, group string }{
		{"admin.kubeconfig", "capstan-test-admin", "system:masters"},
		{"controller-manager.kubeconfig", "system:kube-controller-manager", ""},
		{"scheduler.kubeconfig", "system:kube-scheduler", ""},
	} {
		var groups []string
		if id.group != "" {
			groups = []string{id.group}
		}
		pair, err := ca.issue(id.user, groups, false, nil, nil)
		if err != nil {
			return err
		}
		kc, err := clientcmd.Write(*kubeconfig(c.Server, c.CA, id.user, pair))
		if err != nil {
			return err
		}
		files[id.file] = kc
	}
	files["kwok.yaml"] = []byte(kwokStages(pullFails))
	c.Kubeconfig = c.path("admin.kubeconfig")
	return writeFiles(c.Dir, files)
}

// kubeconfig builds a kubeconfig for user at server, with the CA pinned.
func kubeconfig(server string, ca []byte, user string, pair keyPair) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["capstan-test"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.cert, ClientKeyData: pair.key}
	cfg.Contexts["capstan-test"] = &clientcmdapi.Context{Cluster: "capstan-test", AuthInfo: user}
	cfg.CurrentContext = "capstan-test"
	return cfg
}

// kwokStages is stages.yaml with the nodes whose registry is unreachable.
func kwokStages(pullFails []string) string {
	quoted := make([]string, len(pullFails))
	for i, n := range pullFails {
		quoted[i] = "'" + n + "'"
	}
	return strings.ReplaceAll(stages, "PULL_FAILS", strings.Join(quoted, ", "))
}

// Client is an administrator's client of the cluster.
func (c *Cluster) Client() (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// WaitReady waits until the API server answers /readyz, or fails with
// its last log lines when it ends or the time runs out.
func (c *Cluster) WaitReady(ctx context.Context, within time.Duration) error {
	client, err := c.Client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond) // the API server gives no sign when it is ready but this endpoint
	defer tick.Stop()
	var last error
	for {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = err
		select {
		case <-c.apiserver.done:
			return fmt.Errorf("kubecluster: kube-apiserver ended before it was ready:\n%s", c.LogTail("kube-apiserver", 30))
		case <-c.etcd.done:
			return fmt.Errorf("kubecluster: etcd ended:\n%s", c.LogTail("etcd", 30))
		case <-ctx.Done():
			return fmt.Errorf("kubecluster: kube-apiserver not ready within %s (last: %v):\n%s", within, last, c.LogTail("kube-apiserver", 30))
		case <-tick.C:
		}
	}
}

// addNodes creates the kwok nodes and waits, on a watch, until kwok has
// made each Ready.
func (c *Cluster) addNodes(ctx context.Context, names []string) error {
	client, err := c.Client()
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := AddNode(ctx, client, name, nil); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for _, name := range names {
		if err := WaitNodeReady(ctx, client, name, true); err != nil {
			return fmt.Errorf("kubecluster: node %s: %w\nkwok:\n%s", name, err, c.LogTail("kwok", 20))
		}
	}
	return nil
}

// AddNode creates a node kwok plays, with labels beside its own and
// taints.
func AddNode(ctx context.Context, client kubernetes.Interface, name string, labels map[string]string, taints ...corev1.Taint) error {
	l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}
	for k, v := range labels {
		l[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Spec:       corev1.NodeSpec{Taints: taints},
	}
	_, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// WaitNodeReady waits on a watch until the node's Ready condition is
// ready (true or false).
func WaitNodeReady(ctx context.Context, client kubernetes.Interface, name string, ready bool) error {
	want := corev1.ConditionFalse
	if ready {
		want = corev1.ConditionTrue
	}
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return err
	}
	if len(list.Items) == 1 && nodeReady(&list.Items[0]) == want {
		return nil
	}
	w, err := client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return WaitNodeReady(ctx, client, name, ready)
			}
			if n, isNode := ev.Object.(*corev1.Node); isNode && ev.Type != watch.Deleted && nodeReady(n) == want {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("not Ready=%s: %w", want, ctx.Err())
		}
	}
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

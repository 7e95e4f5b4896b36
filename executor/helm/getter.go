package helm

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// getter gives Helm the target's client configuration (its pinned CA, its
// token, the egress dialer) as the RESTClientGetter it asks for, never a
// kubeconfig from the server's environment.
type getter struct {
	cfg       *rest.Config
	namespace string
	disc      discovery.CachedDiscoveryInterface
}

func newGetter(cfg *rest.Config, namespace string) *getter {
	return &getter{cfg: cfg, namespace: namespace}
}

func (g *getter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

func (g *getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if g.disc == nil {
		d, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(g.cfg))
		if err != nil {
			return nil, err
		}
		g.disc = memory.NewMemCacheClient(d)
	}
	return g.disc, nil
}

func (g *getter) ToRESTMapper() (meta.RESTMapper, error) {
	d, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(d), nil
}

// ToRawKubeConfigLoader holds only the namespace: Helm reads its default
// namespace from it, and its clients from ToRESTConfig.
func (g *getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["target"] = &clientcmdapi.Cluster{Server: g.cfg.Host, CertificateAuthorityData: g.cfg.CAData}
	cfg.AuthInfos["capstan"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["target"] = &clientcmdapi.Context{Cluster: "target", AuthInfo: "capstan", Namespace: g.namespace}
	cfg.CurrentContext = "target"
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{})
}

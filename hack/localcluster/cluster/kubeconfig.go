package cluster

import (
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a kubeconfig for server that authenticates with the
// client certificate id of p. Certificates are embedded, so the file works
// wherever it is copied.
func (p PKI) WriteKubeconfig(path, server string, id ClientIdentity) error {
	ca, err := os.ReadFile(p.Path(CACert))
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(p.Path(id.Cert))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.Path(id.Key))
	if err != nil {
		return err
	}
	const name = "repot-local"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[id.User] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: id.User, Namespace: "default"}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return writeAtomic(path, data, 0o600)
}

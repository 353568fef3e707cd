package testenv

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// serviceCIDR is every member's service range; members are independent, so
// they may share it.
const serviceCIDR = "10.0.0.0/24"

// etcdArgs runs a single-node etcd on the member's two loopback ports.
// fsync is off: the data only has to survive an apiserver restart, not a
// machine crash.
func (m *Member) etcdArgs() []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", m.etcdPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", m.peerPort)
	return []string{
		"--name=" + m.Name,
		"--data-dir=" + filepath.Join(m.Dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + m.Name + "=" + peer,
		"--unsafe-no-fsync=true",
	}
}

// apiserverArgs serves HTTPS on the member's fixed port with the member's
// certificates, so a restart is reachable through the same rest.Config.
//
// The advertise address is loopback and the endpoint reconciler is off:
// Endpoints may not hold loopback addresses, and nothing in a test dials the
// in-cluster "kubernetes" Service. Without workloads there is no
// controller-manager to create "default" ServiceAccounts, so the
// ServiceAccount admission plugin is disabled as envtest does.
func (m *Member) apiserverArgs() []string {
	args := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", m.etcdPort),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", m.apiPort),
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + m.pki.dir,
		"--tls-cert-file=" + m.pki.path(servingCertFile),
		"--tls-private-key-file=" + m.pki.path(servingKeyFile),
		"--client-ca-file=" + m.pki.path(caCertFile),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + m.pki.path(saPublicFile),
		"--service-account-signing-key-file=" + m.pki.path(saPrivateFile),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--profiling=false",
	}
	if !m.workloads {
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	if m.audit {
		args = append(args,
			"--audit-policy-file="+filepath.Join(m.Dir, auditPolicyFile),
			"--audit-log-path="+m.AuditLogPath(),
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
			"--audit-log-maxsize=0")
	}
	return args
}

// auditPolicyFile is the audit policy written next to the member's logs.
const auditPolicyFile = "audit-policy.yaml"

// auditPolicy records, at Metadata level, every request that can change an
// object (who wrote what, when, and the answer), and nothing else: reads and
// watches would bury the writes a test looks for.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// controllerManagerArgs runs every default controller as the admin user,
// without leader election and without serving.
func (m *Member) controllerManagerArgs() []string {
	return []string{
		"--kubeconfig=" + m.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		"--cluster-name=" + m.Name,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-private-key-file=" + m.pki.path(saPrivateFile),
		"--root-ca-file=" + m.pki.path(caCertFile),
	}
}

// schedulerArgs runs the default scheduler as the admin user, without leader
// election and without serving.
func (m *Member) schedulerArgs() []string {
	return []string{
		"--kubeconfig=" + m.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
	}
}

// kwokArgs runs kwok for the fake nodes testenv creates (and only those),
// with the embedded Stage definitions.
func (m *Member) kwokArgs(stagesPath string) []string {
	return []string{
		"--kubeconfig=" + m.KubeconfigPath,
		"--config=" + stagesPath,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		// The node's heartbeat is its Lease (the node-heartbeat-with-lease
		// stage refreshes its status only every 10 minutes). Without it
		// kwok keeps no Lease, and the node lifecycle controller marks the
		// node NotReady, and its pods not ready, every 50 s or so.
		"--node-lease-duration-seconds=40",
	}
}

// writeKubeconfig writes cfg as a kubeconfig with one context named name,
// certificates inlined.
func writeKubeconfig(path, name string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("failed to write kubeconfig of %s: %w", name, err)
	}
	return nil
}

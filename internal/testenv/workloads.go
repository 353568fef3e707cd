package testenv

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kwokStages holds the Stage definitions kwok needs to drive Nodes and Pods
// (copied from sigs.k8s.io/kwok@v0.8.0, see testdata/kwok/README.md).
//
//go:embed testdata/kwok/*.yaml
var kwokStages embed.FS

const (
	// FakeNodeName is the one Node each member with workloads has.
	FakeNodeName = "kwok-node-0"
	// kwokNodeAnnotation marks the nodes kwok manages.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
)

// Capacity of the fake node: enough for any test workload.
var fakeNodeCapacity = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("32"),
	corev1.ResourceMemory: resource.MustParse("256Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

// startWorkloads starts kube-controller-manager, kube-scheduler and kwok,
// registers the fake Node, and waits until the node is Ready and untainted
// and the controller-manager has created the "default" ServiceAccount.
// The scheduler exposes no readiness signal without serving; a test's first
// scheduled Pod is its proof.
func (m *Member) startWorkloads(ctx context.Context) error {
	stages, err := m.writeKwokStages()
	if err != nil {
		return err
	}
	procs := []*process{
		m.newProcess(binControllerManager, m.controllerManagerArgs()),
		m.newProcess(binScheduler, m.schedulerArgs()),
		m.newProcess(binKwok, m.kwokArgs(stages)),
	}
	for _, p := range procs {
		if err := m.launch(p); err != nil {
			return err
		}
	}
	if _, err := m.client.CoreV1().Nodes().Create(ctx, fakeNode(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: failed to create Node/%s: %w", m.Name, FakeNodeName, err)
	}
	if err := waitUntil(ctx, "the fake node is Ready", m.fakeNodeReady, procs...); err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	if err := waitUntil(ctx, "ServiceAccount/default/default exists", m.defaultServiceAccount, procs...); err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	return nil
}

// writeKwokStages concatenates the embedded Stage files into one
// multi-document file in the member's folder and returns its path.
func (m *Member) writeKwokStages() (string, error) {
	files, err := fs.Glob(kwokStages, "testdata/kwok/*.yaml")
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no embedded kwok stages: %v", err)
	}
	var buf bytes.Buffer
	for _, name := range files {
		data, err := kwokStages.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("failed to read embedded %s: %w", name, err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
		if !bytes.HasSuffix(data, []byte("\n")) {
			buf.WriteString("\n")
		}
	}
	path := filepath.Join(m.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("failed to write kwok stages: %w", err)
	}
	return path, nil
}

// fakeNode returns the Node kwok pretends to run. Nodes accept status on
// create, so capacity is set here and kwok keeps it.
func fakeNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        FakeNodeName,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"type":                   "kwok",
				"kubernetes.io/hostname": FakeNodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    fakeNodeCapacity.DeepCopy(),
			Allocatable: fakeNodeCapacity.DeepCopy(),
		},
	}
}

// fakeNodeReady returns nil once the fake node is Ready and carries no taint
// that would keep Pods off it.
func (m *Member) fakeNodeReady(ctx context.Context) error {
	node, err := m.client.CoreV1().Nodes().Get(ctx, FakeNodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(node.Spec.Taints) > 0 {
		return fmt.Errorf("node is tainted: %v", node.Spec.Taints)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return errors.New("node is not Ready")
}

// defaultServiceAccount returns nil once the controller-manager's
// serviceaccount controller has created the default ServiceAccount.
func (m *Member) defaultServiceAccount(ctx context.Context) error {
	_, err := m.client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
	return err
}

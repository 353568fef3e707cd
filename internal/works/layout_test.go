package works

import (
	"strings"
	"testing"
)

func TestDecodeWorkOfANewerFormat(t *testing.T) {
	files := map[string][]byte{
		WorkFile: []byte("apiVersion: propagit.io/v1alpha1\nkind: Work\nmetadata:\n  name: m\n" +
			"spec:\n  cluster: m\n  formatVersion: 2\n  sourceRevision: abc\n  rollout: {waves: 3}\n"),
		"web/configmap.core_a.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: web\n"),
	}
	w, err := DecodeWork("m", files)
	if err != nil {
		t.Fatal(err)
	}
	if w.Spec.FormatVersion != 2 || w.Spec.SourceRevision != "abc" || len(w.Spec.Manifests) != 1 {
		t.Errorf("work = %+v", w.Spec)
	}
}

func TestDecodeWorkErrors(t *testing.T) {
	for name, files := range map[string]map[string][]byte{
		"no work file":   {"web/configmap.core_a.yaml": []byte("kind: ConfigMap\n")},
		"broken yaml":    {WorkFile: []byte("spec: [\n")},
		"broken object":  {WorkFile: []byte("spec: {}\n"), "web/x.yaml": []byte("a: [\n")},
		"object no kind": {WorkFile: []byte("spec: {}\n"), "web/x.yaml": []byte("apiVersion: v1\n")},
	} {
		if _, err := DecodeWork("m", files); err == nil || !strings.Contains(err.Error(), "work m") {
			t.Errorf("%s: error = %v", name, err)
		}
	}
}

package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// managerOwnedBy returns a Manager for the test member that names its
// installation owner.
func managerOwnedBy(t *testing.T, owner string) *Manager {
	t.Helper()
	opts := DefaultOptions()
	opts.Owner = owner
	m, err := NewForConfig(member.Config, opts)
	if err != nil {
		t.Fatalf("NewForConfig: %v", err)
	}
	return m
}

// TestOwnerTwoInstallationsKeepTheirOwnObjects: two propagit
// installations share a member. Each labels what it applies with its name;
// neither takes over (without conflictResolution Overwrite) nor prunes the
// other's objects, and each prunes its own.
func TestOwnerTwoInstallationsKeepTheirOwnObjects(t *testing.T) {
	blue, green, c := managerOwnedBy(t, "blue"), managerOwnedBy(t, "green"), plainClient(t)
	ns := uniqueNS("owners")
	b, g := configMap(t, ns, "blue-conf", "b"), configMap(t, ns, "green-conf", "g")
	blueInv := mustApply(t, blue, []*unstructured.Unstructured{b}, nil).Inventory
	greenInv := mustApply(t, green, []*unstructured.Unstructured{g}, nil).Inventory
	if got := live(t, c, b).GetLabels()[workv1alpha1.LabelOwner]; got != "blue" {
		t.Fatalf("blue's ConfigMap owner label = %q, want blue", got)
	}

	// green wants blue's object too: refused, named.
	res := mustApply(t, green, []*unstructured.Unstructured{configMap(t, ns, "green-conf", "g"), configMap(t, ns, "blue-conf", "taken")}, greenInv)
	if a := actions(res)["ConfigMap/"+ns+"/blue-conf"]; a != workv1alpha1.ActionFailed {
		t.Fatalf("green applying blue's ConfigMap: %s, want Failed", a)
	}
	if msg := messageOf(res, "ConfigMap/"+ns+"/blue-conf"); !strings.Contains(msg, `"blue"`) {
		t.Errorf("refusal message %q does not name the owning installation", msg)
	}
	if got, _, _ := unstructured.NestedString(live(t, c, b).Object, "data", "key"); got != "b" {
		t.Errorf("blue's ConfigMap data.key = %q after green's attempt, want b", got)
	}

	// An inventory that (wrongly) lists blue's object does not let green
	// prune it.
	stale := append(greenInv, blueInv...)
	res = mustApply(t, green, []*unstructured.Unstructured{configMap(t, ns, "green-conf", "g")}, stale)
	if a := actions(res)["ConfigMap/"+ns+"/blue-conf"]; a != workv1alpha1.ActionSkipped {
		t.Fatalf("green pruning blue's ConfigMap: %s, want Skipped", a)
	}
	live(t, c, b) // still there

	// blue prunes its own.
	res = mustApply(t, blue, nil, blueInv)
	if a := actions(res)["ConfigMap/"+ns+"/blue-conf"]; a != workv1alpha1.ActionPruned {
		t.Fatalf("blue pruning its ConfigMap: %s, want Pruned", a)
	}
	live(t, c, g) // green's is untouched
}

// TestOwnerOverwriteAdoptsAnotherInstallationsObject: with
// conflictResolution Overwrite the taking over is what the author asked.
func TestOwnerOverwriteAdoptsAnotherInstallationsObject(t *testing.T) {
	blue, green, c := managerOwnedBy(t, "blue"), managerOwnedBy(t, "green"), plainClient(t)
	ns := uniqueNS("adopt")
	mustApply(t, blue, []*unstructured.Unstructured{configMap(t, ns, "conf", "b")}, nil)
	cm := configMap(t, ns, "conf", "g")
	cm.SetAnnotations(map[string]string{workv1alpha1.AnnotationConflict: workv1alpha1.ConflictOverwrite})
	res := mustApply(t, green, []*unstructured.Unstructured{cm}, nil)
	if a := actions(res)["ConfigMap/"+ns+"/conf"]; a != workv1alpha1.ActionConfigured {
		t.Fatalf("green overwriting: %s, want Configured", a)
	}
	if got := live(t, c, cm).GetLabels()[workv1alpha1.LabelOwner]; got != "green" {
		t.Errorf("owner label after the take-over = %q, want green", got)
	}
}

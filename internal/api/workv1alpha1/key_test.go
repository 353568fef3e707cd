package workv1alpha1

import "testing"

// TestDisplay: messages spell an object Kind.group/namespace/name, the
// core group and a cluster-scoped object's namespace left out, and a
// revision by 7 characters; the stored form reads back into the same.
func TestDisplay(t *testing.T) {
	for _, tt := range []struct {
		key  ObjectKey
		want string
	}{
		{ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "nginx"}, "Deployment.apps/demo/nginx"},
		{ObjectKey{Kind: "Service", Namespace: "demo", Name: "nginx"}, "Service/demo/nginx"},
		{ObjectKey{Group: "core", Kind: "Namespace", Name: "demo"}, "Namespace/demo"},
		{ObjectKey{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "reader"}, "ClusterRole.rbac.authorization.k8s.io/reader"},
	} {
		if got := tt.key.Display(); got != tt.want {
			t.Errorf("%#v.Display() = %q, want %q", tt.key, got, tt.want)
		}
		if got := DisplayKey(tt.key.String()); got != tt.want {
			t.Errorf("DisplayKey(%q) = %q, want %q", tt.key.String(), got, tt.want)
		}
	}
	if got := DisplayKey("not a key"); got != "not a key" {
		t.Errorf("DisplayKey of no key = %q, want it unchanged", got)
	}
	for rev, want := range map[string]string{"0123456789abcdef": "0123456", "abc": "abc", "": "(no revision)"} {
		if got := DisplayRevision(rev); got != want {
			t.Errorf("DisplayRevision(%q) = %q, want %q", rev, got, want)
		}
	}
}

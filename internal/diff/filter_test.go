package diff

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Input.Clusters keeps the named clusters in every list of the report,
// counts only their unchanged ones, and still pairs moves over all.
func TestCompareOnlyNamedClusters(t *testing.T) {
	objs := func(image string) []*unstructured.Unstructured {
		return []*unstructured.Unstructured{deployment("web", 2, image)}
	}
	base := map[string][]*unstructured.Unstructured{"a": objs("web:1"), "b": objs("web:1"), "c": objs("web:1"), "d": objs("web:1")}
	head := map[string][]*unstructured.Unstructured{"a": objs("web:2"), "c": objs("web:1"), "d": objs("web:1"), "e": objs("web:1")}
	tests := []struct {
		only             []string
		clusters         []string
		deletions, moves int
		unchanged        int
		differs          bool
	}{
		{nil, []string{"a", "b", "e"}, 0, 1, 2, true},
		{[]string{"a", "c"}, []string{"a"}, 0, 0, 1, true},
		{[]string{"b"}, []string{"b"}, 0, 1, 0, true},
		{[]string{"c", "d", "c"}, nil, 0, 0, 2, false},
	}
	for _, tt := range tests {
		r := Compare(Input{Base: result(base), Head: result(head), Clusters: tt.only})
		var names []string
		for _, c := range r.Clusters {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, tt.clusters) || len(r.Deletions) != tt.deletions || len(r.Moves) != tt.moves ||
			r.UnchangedClusters != tt.unchanged || r.Differs != tt.differs {
			t.Errorf("only %v: clusters %v, deletions %d, moves %d, unchanged %d, differs %v; want %v, %d, %d, %d, %v",
				tt.only, names, len(r.Deletions), len(r.Moves), r.UnchangedClusters, r.Differs,
				tt.clusters, tt.deletions, tt.moves, tt.unchanged, tt.differs)
		}
	}
}

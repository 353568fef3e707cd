package diff

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkCompare isolates Compare and the text format on the shape of the
// issue #4 benchmark: 1,000 objects on each of 20 clusters, 10 of them
// changed. The end-to-end benchmark (Git, load, render twice, compare) is
// BenchmarkDiff in internal/cli.
func BenchmarkCompare(b *testing.B) {
	base, head := map[string][]*unstructured.Unstructured{}, map[string][]*unstructured.Unstructured{}
	for c := 0; c < 20; c++ {
		name := fmt.Sprintf("c%02d", c)
		for i := 0; i < 1000; i++ {
			image := "web:1"
			base[name] = append(base[name], deployment(fmt.Sprintf("t%04d", i), 3, image))
			if i < 10 {
				image = "web:2"
			}
			head[name] = append(head[name], deployment(fmt.Sprintf("t%04d", i), 3, image))
		}
	}
	in := Input{Base: result(base), Head: result(head)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := Compare(in)
		if len(r.Clusters) != 20 || len(r.Text()) == 0 {
			b.Fatal("want 20 changed clusters")
		}
	}
}

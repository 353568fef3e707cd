package workv1alpha1

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEncoderEncodesOnce: a shared object is encoded once, to the bytes
// EncodeManifests always wrote, from any number of goroutines.
func TestEncoderEncodesOnce(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "demo"}, "data": map[string]any{"k": "v"}}}
	want, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	enc := NewEncoder()
	got := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			m, err := enc.EncodeManifests([]*unstructured.Unstructured{obj, obj})
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = m[1].Raw
		})
	}
	wg.Wait()
	first, _ := enc.Encode(obj)
	for i, g := range got {
		if !bytes.Equal(g, want) {
			t.Fatalf("goroutine %d encoded %s, want %s", i, g, want)
		}
	}
	again, _ := enc.Encode(obj)
	if &again[0] != &first[0] {
		t.Error("the second Encode of one object encoded it again")
	}
	plain, err := EncodeManifests([]*unstructured.Unstructured{obj})
	if err != nil || !bytes.Equal(plain[0].Raw, want) {
		t.Errorf("EncodeManifests = %s, %v; want %s", plain[0].Raw, err, want)
	}
}

// TestEncoderNext: an encoder kept across renders reuses the bytes of an
// object the last render used, and forgets one the last render did not.
func TestEncoderNext(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	enc := NewEncoder()
	first, err := enc.Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	enc.Next()
	again, _ := enc.Encode(obj)
	if &again[0] != &first[0] {
		t.Error("the object the last render encoded was encoded again")
	}
	enc.Settle()
	enc.Next()
	enc.Settle() // a render that did not use obj
	enc.Next()
	fresh, _ := enc.Encode(obj)
	if &fresh[0] == &first[0] {
		t.Error("an object two renders did not use is still remembered")
	}
	if string(fresh) != string(first) {
		t.Errorf("encoded %s, then %s", first, fresh)
	}
}

package override_test

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
)

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.25
`

// decode turns YAML into an object the way the loader does.
func decode(doc string) *unstructured.Unstructured {
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		panic(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		panic(err)
	}
	return obj
}

// A ClusterOverridePolicy points every workload at a mirror, then an
// OverridePolicy gives the clusters in the eu region more replicas and a
// label. Only the rules whose targetCluster matches run.
func ExampleApply() {
	mirror := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "mirror"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
				{Component: "Registry", Operator: "replace", Value: "mirror.example:5000"},
			}},
		}}},
	}
	web := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{
				{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"us-1"}},
					Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
						{Operator: "replace", Path: "/spec/replicas", Value: &apiextensionsv1.JSON{Raw: []byte("1")}},
					}},
				},
				{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"eu-1"}},
					Overriders: policyv1alpha1.Overriders{
						LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
							{Operator: "add", Value: map[string]string{"example.com/region": "eu"}},
						},
						Plaintext: []policyv1alpha1.PlaintextOverrider{
							{Operator: "replace", Path: "/spec/replicas", Value: &apiextensionsv1.JSON{Raw: []byte("5")}},
						},
					},
				},
			},
		},
	}
	policies := []load.Override{{Policy: web}, {Policy: mirror, ClusterScoped: true}}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}}

	obj := decode(deployment)
	res, err := override.Apply(obj, cluster, policies)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Changes {
		fmt.Println(c)
	}
	out, _ := yaml.Marshal(obj.Object)
	fmt.Print(string(out))
	// Output:
	// ClusterOverridePolicy.policy.karmada.io/mirror rule 0 imageOverrider /spec/template/spec/containers/0/image: "nginx:1.25" -> "mirror.example:5000/nginx:1.25"
	// OverridePolicy.policy.karmada.io/default/web rule 1 labelsOverrider /metadata/labels/example.com~1region: (absent) -> "eu"
	// OverridePolicy.policy.karmada.io/default/web rule 1 plaintext /spec/replicas: 3 -> 5
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata:
	//   labels:
	//     example.com/region: eu
	//   name: web
	//   namespace: default
	// spec:
	//   replicas: 5
	//   template:
	//     spec:
	//       containers:
	//       - image: mirror.example:5000/nginx:1.25
	//         name: web
}

// A ConfigMap holds a YAML file; a fieldOverrider edits one key inside it
// and a plaintext rule fails on a path the ConfigMap does not have, which
// stops rendering the object for that cluster.
func ExampleApply_fieldOverrider() {
	cm := decode(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: default
data:
  app.yaml: |
    log:
      level: info
`)
	p := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "default"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{
			{Overriders: policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{
				FieldPath: "/data/app.yaml",
				YAML: []policyv1alpha1.YAMLPatchOp{
					{Operator: "replace", SubPath: "/log/level", Value: &apiextensionsv1.JSON{Raw: []byte(`"debug"`)}},
				},
			}}}},
			{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
				{Operator: "replace", Path: "/spec/replicas", Value: &apiextensionsv1.JSON{Raw: []byte("2")}},
			}}},
		}},
	}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "dev"}}

	res, err := override.Apply(cm, cluster, []load.Override{{Policy: p}})
	fmt.Println(res.Changes[0])
	fmt.Println(err)
	// Output:
	// OverridePolicy.policy.karmada.io/default/debug rule 0 fieldOverrider /data/app.yaml: "log:\n  level: info\n" -> "log:\n  level: debug\n"
	// OverridePolicy.policy.karmada.io/default/debug: overrideRules[1].overriders.plaintext: failed to apply patch: replace operation does not apply: doc is missing path: /spec/replicas: missing value
}

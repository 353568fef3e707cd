package load

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// checker collects semantic problems by field path; their lines are looked
// up afterwards in the strict walker's line table.
type checker struct {
	issues []issue
}

func (c *checker) add(field, format string, args ...any) {
	c.issues = append(c.issues, issue{field: field, msg: fmt.Sprintf(format, args...)})
}

// warn adds a warning: it becomes a Finding and does not fail the load.
func (c *checker) warn(field, format string, args ...any) {
	c.issues = append(c.issues, issue{field: field, msg: fmt.Sprintf(format, args...), sev: sevWarning})
}

// missing adds an error caused only by the absence of absentField; in an
// excerpt the absence is taken as elided (see excerpt.go).
func (c *checker) missing(field, absentField, format string, args ...any) {
	c.issues = append(c.issues, issue{field: field, msg: fmt.Sprintf(format, args...), absent: absentField})
}

// oneOf reports a non-empty value that is not among allowed.
func (c *checker) oneOf(field, value string, allowed ...string) {
	if value != "" && !slices.Contains(allowed, value) {
		c.add(field, "%q is not one of %s", value, strings.Join(allowed, ", "))
	}
}

// required reports an empty value.
func (c *checker) required(field, value string) bool {
	if value == "" {
		c.add(field, "required")
		return false
	}
	return true
}

// messages adds one problem per validation message (content.Is* results).
func (c *checker) messages(field, value string, msgs []string) {
	for _, m := range msgs {
		c.add(field, "%q is invalid: %s", value, m)
	}
}

func (c *checker) labelKey(field, key string) { c.messages(field, key, content.IsLabelKey(key)) }

func (c *checker) labelValue(field, value string) {
	c.messages(field, value, content.IsLabelValue(value))
}

// labelSelector checks keys, values and operators of a label selector.
func (c *checker) labelSelector(path string, s *metav1.LabelSelector) {
	if s == nil {
		return
	}
	for _, k := range sortedKeys(s.MatchLabels) {
		c.labelKey(keyPath(path+".matchLabels", k), k)
		c.labelValue(keyPath(path+".matchLabels", k), s.MatchLabels[k])
	}
	for i, e := range s.MatchExpressions {
		p := indexPath(path+".matchExpressions", i)
		c.labelKey(p+".key", e.Key)
		switch e.Operator {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			if len(e.Values) == 0 {
				c.add(p+".values", "required when operator is %s", e.Operator)
			}
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
			if len(e.Values) > 0 {
				c.add(p+".values", "must be empty when operator is %s", e.Operator)
			}
		default:
			c.add(p+".operator", "%q is not one of In, NotIn, Exists, DoesNotExist", e.Operator)
		}
		for j, v := range e.Values {
			c.labelValue(indexPath(p+".values", j), v)
		}
	}
}

// resourceSelector checks the fields every selector needs.
func (c *checker) resourceSelector(path string, rs policyv1alpha1.ResourceSelector) {
	if c.required(path+".apiVersion", rs.APIVersion) {
		c.apiVersion(path+".apiVersion", rs.APIVersion)
	}
	c.required(path+".kind", rs.Kind)
	c.labelSelector(path+".labelSelector", rs.LabelSelector)
}

// apiVersion checks "group/version" or "version": the group a lower-case
// DNS subdomain, the version a DNS label. "Apps/v1" never matches anything.
func (c *checker) apiVersion(field, value string) {
	gv, err := schema.ParseGroupVersion(value)
	if err != nil || gv.Version == "" {
		c.add(field, "%q is not an apiVersion (group/version, or version for the core group)", value)
		return
	}
	if gv.Group != "" && len(content.IsDNS1123Subdomain(gv.Group)) > 0 {
		c.add(field, "%q is not an apiVersion: the group %q must be a lower-case DNS subdomain", value, gv.Group)
	}
	if len(content.IsDNS1123Label(gv.Version)) > 0 {
		c.add(field, "%q is not an apiVersion: the version %q must be a lower-case DNS label", value, gv.Version)
	}
}

// clusterAffinity checks label and field selectors of an affinity.
func (c *checker) clusterAffinity(path string, a *policyv1alpha1.ClusterAffinity) {
	if a == nil {
		return
	}
	c.labelSelector(path+".labelSelector", a.LabelSelector)
	if a.FieldSelector == nil {
		return
	}
	for i, e := range a.FieldSelector.MatchExpressions {
		p := indexPath(path+".fieldSelector.matchExpressions", i)
		if c.required(p+".key", e.Key) {
			c.oneOf(p+".key", e.Key, policyv1alpha1.FieldProvider, policyv1alpha1.FieldRegion, policyv1alpha1.FieldZone)
		}
		if c.required(p+".operator", string(e.Operator)) {
			c.oneOf(p+".operator", string(e.Operator), string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn))
		}
	}
}

// jsonPointer checks an RFC 6901 JSON pointer: empty, or "/" followed by
// segments in which "~" is only used as "~0" or "~1".
func (c *checker) jsonPointer(field, value string) {
	if value == "" {
		c.add(field, "required: a JSON pointer such as /spec/replicas")
		return
	}
	if !strings.HasPrefix(value, "/") {
		c.add(field, "%q is not a JSON pointer: it must start with \"/\" (e.g. /spec/replicas)", value)
		return
	}
	for i := 0; i < len(value); i++ {
		if value[i] == '~' && (i+1 == len(value) || (value[i+1] != '0' && value[i+1] != '1')) {
			c.add(field, "%q is not a JSON pointer: \"~\" must be written ~0 and \"/\" inside a key ~1", value)
			return
		}
	}
}

// weight checks a static weight: Karmada's CRD schema requires at least 1
// (StaticClusterWeight.weight, Minimum=1), so the apiserver rejects 0.
func (c *checker) weight(field string, v int64) {
	if v < 1 {
		c.add(field, "%s must be at least 1 (Karmada's CRD minimum); leave the cluster out of staticWeightList to give it no replicas", strconv.FormatInt(v, 10))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

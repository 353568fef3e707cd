package render

import "regexp"

// defaultSkippedNamespaces is Karmada's --skipped-propagating-namespaces.
const defaultSkippedNamespaces = `kube-.*`

// DefaultOptions returns Karmada's defaults: kube-.* skipped, namespace
// auto-propagation on.
func DefaultOptions() Options {
	return Options{
		SkippedNamespaces:        []*regexp.Regexp{regexp.MustCompile("^(?:" + defaultSkippedNamespaces + ")$")},
		NamespaceAutoPropagation: true,
	}
}

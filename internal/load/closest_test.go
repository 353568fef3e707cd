package load

import "testing"

func TestClosest(t *testing.T) {
	for _, tc := range []struct {
		s     string
		cands []string
		want  string
	}{
		{"ngnix", []string{"nginx", "redis"}, "nginx"},
		{"replicaz", []string{"replicas", "selector", "template"}, "replicas"},
		{"member3", []string{"member1", "member2"}, ""}, // a tie suggests neither
		{"member-2", []string{"member1", "member2"}, "member2"},
		{"web", []string{"api", "db"}, ""}, // too far
		{"ab", []string{"xy"}, ""},         // two edits of two letters is no typo
		{"nginx", []string{"nginx"}, ""},   // the same is no suggestion
		{"clusterAfinity", []string{"clusterAffinity", "clusterAffinities"}, "clusterAffinity"},
	} {
		if got := Closest(tc.s, tc.cands); got != tc.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", tc.s, tc.cands, got, tc.want)
		}
	}
}

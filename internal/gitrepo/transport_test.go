package gitrepo

import "testing"

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@host/x.git?t=1#f": "https://host/x.git",
		"file:///srv/fleet.git":        "file:///srv/fleet.git",
		"git@github.com:org/fleet.git": "github.com:org/fleet.git",
		"./local":                      "./local",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

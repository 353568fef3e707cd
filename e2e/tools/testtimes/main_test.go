package main

import (
	"strings"
	"testing"
)

// TestReportShowsFailuresAndSlowest: a failed test's output is printed, a
// passing test's is not, the slowest come first, and a package that never
// reported a result counts as failed.
func TestReportShowsFailuresAndSlowest(t *testing.T) {
	stream := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestFast"}
{"Action":"output","Package":"p","Test":"TestFast","Output":"quiet when passing\n"}
{"Action":"pass","Package":"p","Test":"TestFast","Elapsed":0.5}
{"Action":"output","Package":"p","Test":"TestSlow","Output":"want 2, got 3\n"}
{"Action":"fail","Package":"p","Test":"TestSlow","Elapsed":42}
{"Action":"fail","Package":"p","Elapsed":43}
{"Action":"start","Package":"q"}
{"Action":"output","Package":"q","Output":"panic: test timed out\n"}
# a build error line
`
	var out strings.Builder
	r := &report{out: &out, output: map[key]*strings.Builder{}, open: map[string]bool{}}
	if err := r.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	r.summary(10)
	got := out.String()
	for _, want := range []string{"want 2, got 3", "FAIL\tp\t43.0s", "# a build error line", "FAIL\tq\t(no result", "panic: test timed out"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet when passing") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
	if slow, fast := strings.Index(got, "TestSlow  p"), strings.Index(got, "TestFast  p"); slow < 0 || fast < 0 || slow > fast {
		t.Errorf("want TestSlow listed before TestFast:\n%s", got)
	}
	if !r.failed {
		t.Error("the report did not fail")
	}
}

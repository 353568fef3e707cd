package testenv

import (
	"testing"
	"time"
)

// BenchmarkMemberCost measures what one member costs the machine: the wall
// time until it is ready, the CPU seconds its processes spent getting
// there (apiserver and etcd apart), and the CPU they burn while idle. The
// suite is CPU-bound on two cores, so start and idle CPU are what a shared
// or trimmed member saves.
//
//	go test -run '^$' -bench MemberCost -benchtime 3x ./internal/testenv/
func BenchmarkMemberCost(b *testing.B) {
	const idle = 20 * time.Second
	var wall time.Duration
	var startCPU, idleCPU map[string]float64 = map[string]float64{}, map[string]float64{}
	for b.Loop() {
		began := time.Now()
		e, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(began)
		pids := e.Members[0].PIDs()
		at := cpuOf(b, pids)
		time.Sleep(idle) // measuring idle burn: there is nothing to wait for
		after := cpuOf(b, pids)
		for name := range at {
			startCPU[name] += at[name]
			idleCPU[name] += after[name] - at[name]
		}
		if err := e.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()/n, "s-ready")
	for name := range startCPU {
		b.ReportMetric(startCPU[name]/n, "cpu-s-start-"+name)
		b.ReportMetric(idleCPU[name]/n/idle.Seconds()*100, "%cpu-idle-"+name)
	}
}

// cpuOf is CPUSeconds, failing b on an error.
func cpuOf(b *testing.B, pids map[string]int) map[string]float64 {
	out, err := CPUSeconds(pids)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

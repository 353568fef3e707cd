package apply

import (
	"testing"
	"time"
)

func TestExperimentPhases(t *testing.T) {
	m := newTestManager(&testing.B{})
	_ = m
	b := &testing.B{}
	_ = b
	objs, _ := benchObjects(&testing.B{}, "exp")
	ctx := t.Context()
	if res, err := m.Apply(ctx, objs, nil); err != nil || res.Failed > 0 {
		t.Fatal(err, res)
	}
	for round := 0; round < 3; round++ {
		began := time.Now()
		forEach(ctx, len(objs), 32, func(i int) { _, _ = m.get(ctx, objs[i]) })
		gets := time.Since(began)
		p := newPlan(objs, nil)
		began = time.Now()
		m.readLive(ctx, p.items, nil)
		lists := time.Since(began)
		began = time.Now()
		forEach(ctx, len(objs), 32, func(i int) { d := objs[i].DeepCopy(); _ = m.send(ctx, d, true, true) })
		dry := time.Since(began)
		t.Logf("round %d: 1000 GETs %s, grouped LISTs %s, 1000 dry-runs %s", round, gets, lists, dry)
	}
}

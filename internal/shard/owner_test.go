package shard

import (
	"fmt"
	"testing"
)

// TestOwnerMovesOnlyWhatANewReplicaWins pins rendezvous hashing: every key
// has one owner, the owners are spread, and a fourth replica takes about a
// quarter of the keys, all from the others, moving nothing else.
func TestOwnerMovesOnlyWhatANewReplicaWins(t *testing.T) {
	three := []string{"r1", "r2", "r3"}
	four := []string{"r1", "r2", "r3", "r4"}
	const keys = 1000
	count := map[string]int{}
	moved := 0
	for i := range keys {
		k := MemberKey(fmt.Sprintf("c%04d", i))
		before, after := Owner(k, three), Owner(k, four)
		count[before]++
		if before != after {
			moved++
			if after != "r4" {
				t.Errorf("%s moved from %s to %s: only the new replica may take keys", k, before, after)
			}
		}
	}
	for _, r := range three {
		if n := count[r]; n < keys/3-keys/10 || n > keys/3+keys/10 {
			t.Errorf("%s owns %d of %d keys, want about a third", r, n, keys)
		}
	}
	if moved < keys/4-keys/10 || moved > keys/4+keys/10 {
		t.Errorf("a fourth replica moved %d of %d keys, want about a quarter", moved, keys)
	}
	if Owner("k", nil) != "" {
		t.Error("a key has an owner with no live replica")
	}
}

package schedule

import "math/bits"

// Party is one participant of a Webster apportionment: a cluster with its
// votes (weight) and the seats (replicas) it already holds.
type Party struct {
	Name  string
	Votes int64
	Seats int32
}

// Webster hands out seats one at a time, each to the party with the highest
// votes/(2·seats+1) (the Sainte-Laguë divisor method, Karmada's divider since
// v1.16). It returns every party's final seats (initial plus new) in the
// order of parties.
//
// Ties go to the party with fewer seats, then to the party whose name sorts
// first. Karmada breaks the last tie by the template UID: ascending names when
// the UID is empty or hashes even, descending otherwise. Git objects have no
// UID, so propagit always uses ascending names (Karmada's empty-UID order);
// on a real Karmada the outcome of a full tie depends on a random UID.
//
// A party with 0 votes wins a seat only when every party has 0 votes.
// Negative votes count as 0. The cost is O(seats × parties).
func Webster(seats int32, parties []Party) []int32 {
	if len(parties) == 0 {
		return nil
	}
	out := make([]int32, len(parties))
	for i, p := range parties {
		out[i] = p.Seats
	}
	for ; seats > 0; seats-- {
		best := 0
		for i := 1; i < len(parties); i++ {
			if websterBefore(parties[i], out[i], parties[best], out[best]) {
				best = i
			}
		}
		out[best]++
	}
	return out
}

// websterBefore reports whether party a (holding sa seats) gets the next
// seat before party b (holding sb seats). Priorities are compared exactly:
// va·(2sb+1) against vb·(2sa+1) in 128 bits.
func websterBefore(a Party, sa int32, b Party, sb int32) bool {
	va, vb := uint64(max(a.Votes, 0)), uint64(max(b.Votes, 0))
	da, db := uint64(2*int64(max(sa, 0))+1), uint64(2*int64(max(sb, 0))+1)
	ahi, alo := bits.Mul64(va, db)
	bhi, blo := bits.Mul64(vb, da)
	if ahi != bhi {
		return ahi > bhi
	}
	if alo != blo {
		return alo > blo
	}
	if sa != sb {
		return sa < sb
	}
	return a.Name < b.Name
}

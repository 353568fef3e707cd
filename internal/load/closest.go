package load

import "slices"

// Closest returns the candidate nearest to s by edit distance when it is
// near enough to be a typo (at most 2 edits, and fewer than a third of
// s) and no other candidate is as near: "member3" among member1 and
// member2 suggests neither. "" when there is no such candidate.
func Closest(s string, candidates []string) string {
	limit := min(2, (len(s)-1)/3+1)
	best, bestD, tie := "", limit+1, false
	for _, c := range slices.Compact(slices.Sorted(slices.Values(candidates))) {
		if c == s {
			continue
		}
		switch d := editDistance(s, c, bestD+1); {
		case d < bestD:
			best, bestD, tie = c, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or any value ≥ stop
// once it is known to reach stop.
func editDistance(a, b string, stop int) int {
	if d := len(a) - len(b); d >= stop || -d >= stop {
		return stop
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= stop {
			return stop
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

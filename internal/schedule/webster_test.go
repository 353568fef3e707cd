package schedule

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWebster(t *testing.T) {
	tests := []struct {
		name    string
		seats   int32
		parties []Party
		want    []int32
	}{
		{
			name:    "sainte-lague textbook example",
			seats:   8,
			parties: []Party{{Name: "A", Votes: 100000}, {Name: "B", Votes: 80000}, {Name: "C", Votes: 30000}, {Name: "D", Votes: 20000}},
			want:    []int32{3, 3, 1, 1},
		},
		{
			name:    "3:2:1 with 12 seats is exact",
			seats:   12,
			parties: []Party{{Name: "m1", Votes: 3}, {Name: "m2", Votes: 2}, {Name: "m3", Votes: 1}},
			want:    []int32{6, 4, 2},
		},
		{
			name:    "3:2:1 with 13 seats gives the extra seat to the largest",
			seats:   13,
			parties: []Party{{Name: "m1", Votes: 3}, {Name: "m2", Votes: 2}, {Name: "m3", Votes: 1}},
			want:    []int32{7, 4, 2},
		},
		{
			name:    "3:2:1 with 14 seats is 7/5/2, not the pre-v1.16 8/4/2",
			seats:   14,
			parties: []Party{{Name: "m1", Votes: 3}, {Name: "m2", Votes: 2}, {Name: "m3", Votes: 1}},
			want:    []int32{7, 5, 2},
		},
		{
			name:    "full tie goes to the ascending name",
			seats:   1,
			parties: []Party{{Name: "b", Votes: 1}, {Name: "a", Votes: 1}},
			want:    []int32{0, 1},
		},
		{
			name:    "equal weights, odd seats: first name gets the extra",
			seats:   5,
			parties: []Party{{Name: "a", Votes: 1}, {Name: "b", Votes: 1}},
			want:    []int32{3, 2},
		},
		{
			name:    "equal weights over three parties",
			seats:   7,
			parties: []Party{{Name: "c", Votes: 1}, {Name: "a", Votes: 1}, {Name: "b", Votes: 1}},
			want:    []int32{2, 3, 2},
		},
		{
			name:    "equal priority prefers the party with fewer seats",
			seats:   1,
			parties: []Party{{Name: "a", Votes: 3, Seats: 1}, {Name: "b", Votes: 1}},
			want:    []int32{1, 1},
		},
		{
			name:    "initial seats lower a party's priority",
			seats:   2,
			parties: []Party{{Name: "a", Votes: 1, Seats: 2}, {Name: "b", Votes: 1}},
			want:    []int32{2, 2},
		},
		{
			name:    "zero votes never win while another party has votes",
			seats:   3,
			parties: []Party{{Name: "a", Votes: 0}, {Name: "b", Votes: 1}},
			want:    []int32{0, 3},
		},
		{
			name:    "all zero votes share seats by the tie rules",
			seats:   3,
			parties: []Party{{Name: "a", Votes: 0}, {Name: "b", Votes: 0}},
			want:    []int32{2, 1},
		},
		{
			name:    "priorities are compared exactly, not as floats",
			seats:   1,
			parties: []Party{{Name: "a", Votes: math.MaxInt64 - 1}, {Name: "b", Votes: math.MaxInt64}},
			want:    []int32{0, 1},
		},
		{
			name:    "no seats keeps the initial seats",
			seats:   0,
			parties: []Party{{Name: "a", Votes: 5, Seats: 4}},
			want:    []int32{4},
		},
		{
			name:  "no parties",
			seats: 3,
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Webster(tt.seats, tt.parties)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Webster() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWebsterSeatOrder checks the order in which seats are handed out: the
// spec's us=2, cn=1 example gives us,cn,us,us,cn,us,us,cn,us,us.
func TestWebsterSeatOrder(t *testing.T) {
	parties := []Party{{Name: "us", Votes: 2}, {Name: "cn", Votes: 1}}
	want := []string{"us", "cn", "us", "us", "cn", "us", "us", "cn", "us", "us"}
	var got []string
	prev := []int32{0, 0}
	for n := int32(1); n <= 10; n++ {
		seats := Webster(n, parties)
		for i := range seats {
			if seats[i] > prev[i] {
				got = append(got, parties[i].Name)
			}
		}
		prev = seats
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seat order mismatch (-want +got):\n%s", diff)
	}
}

package rollout

import (
	"strings"

	"github.com/propagit/propagit/internal/guard"
)

// ControlTrailer is the commit trailer that steers a rollout from Git:
// "Propagit-Rollout: skip-soak" skips the soak times of the rollouts that
// commit starts, and only those (a commit cannot hurry another team's
// rollout). Aborting is a field of the RolloutPolicy (spec.abort), which
// only the policy's owners can change.
const ControlTrailer = "Propagit-Rollout"

// ParseControl reads what a commit message asks of the rollout, from its
// trailer block only (a quoted trailer in a body does not count). Unknown
// values are returned, so the caller can say they were ignored.
func ParseControl(message string) (Control, []string) {
	var c Control
	var unknown []string
	for _, v := range guard.TrailerValues(message, ControlTrailer) {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "skip-soak":
			c.SkipSoak = true
		default:
			unknown = append(unknown, v)
		}
	}
	return c, unknown
}

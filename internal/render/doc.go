// Package render composes the pure stages — match, schedule, override — into
// Works: for every member cluster, the exact objects it must run, plus the
// record of why (which policy won, which clusters were filtered, the replica
// arithmetic, which overrides changed what). The same inputs always give
// byte-identical Works; the package does no I/O.
package render

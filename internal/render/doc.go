// Package render composes the pure stages — match, schedule, override — into
// Works: for every member cluster, the exact objects it must run, plus the
// record of why (which policy won, which clusters were filtered, the replica
// arithmetic, which overrides changed what). The same inputs always give
// byte-identical Works; the package does no I/O (the CLI reads the flags
// and the restriction policy file). Render reads as its pipeline of stages;
// internal/render/incremental runs the very same stages around a memo, for
// a caller that renders again and again (the controller).
package render

// Package interpret runs the Lua scripts of Karmada's
// ResourceInterpreterCustomization (config.karmada.io/v1alpha1): they tell
// propagit how many replicas a CRD has and what each asks for, how to write
// a member's share back, which fields a member keeps, how to reflect and
// aggregate status, whether a copy is healthy and what it depends on.
//
// Scripts come from Git and are hostile: each call runs in a fresh Lua
// state with only the libraries Karmada's interpreter exposes (base without
// the loaders and metatable access, table, string, math, and the kube
// module through require("kube")), under an instruction budget, an
// allocation budget and a timeout.
//
// # Why scripts run in worker processes
//
// The instruction budget counts Lua instructions only. Go code behind one
// instruction runs unchecked: gopher-lua's pattern matcher backtracks
// without bound (string.rep('a', 5000):find(('.-'):rep(8)..'b') holds a
// core for minutes), table.concat and string.format allocate gigabytes in
// one call, and a returned table of shared subtables reaches 2^60 values.
// Go cannot stop a goroutine from outside, so a call abandoned on its
// timeout kept running, and one allocation could kill the process with
// "fatal error: out of memory". Bounding each such function in Go (a
// matcher of our own with a step counter, a budget in every builtin)
// would leave every builtin we missed open.
//
// So every call runs in a worker: this binary re-executed with
// PROPAGIT_INTERPRET_WORKER=1 (served from this package's init, so any
// binary that links it, tests included, serves its own calls), talking
// length-prefixed JSON over two pipes. The worker keeps the in-process
// budgets (exact there: it runs one call at a time), limits its address
// space (RLIMIT_AS) so one huge allocation fails there, offers itself
// first to the OOM killer (oom_score_adj 1000), exits after any
// budget error, and is killed if it does not answer within the hard
// timeout plus a second. Its death is a budget *Error naming the
// customization, file and line; the caller's process never runs script
// code and never sees more than maxResponse bytes of result. Cheap bounds
// stay in-process too, for clear errors: string.rep, table.concat,
// string.format widths, gsub's copying, and the values and bytes a result
// may convert to.
//
// The cost, measured with `go test ./internal/interpret -bench
// InterpretReplica -benchmem` on a busy 2-core machine: a GetReplicas
// call on a Rollout takes 0.2–0.3 ms in-process and 0.7–2.4 ms through a
// worker (the pipe round trip and two schedulings); a worker is started
// once and reused until a script blows its budget.
//
// Scripts never see Secrets: CheckTarget refuses a customization for v1
// Secret (Karmada allows one), because the object would hold decrypted
// values a script could return or raise. Error.Redacted is the error
// without anything the script produced, for errors stored where others
// read them.
//
// Where it differs from Karmada: os.time and os.date are absent (render is
// a pure function of its inputs), print does nothing, every call starts
// from a fresh state (Karmada reuses pooled states, so a script's globals
// can leak between calls there), a script is stopped by instruction
// count and allocation, not only by Karmada's one-second timeout, and
// string.format refuses widths and precisions over two digits (as Lua
// 5.1 does).
package interpret

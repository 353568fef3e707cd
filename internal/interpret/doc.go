// Package interpret runs the Lua scripts of Karmada's
// ResourceInterpreterCustomization (config.karmada.io/v1alpha1): they tell
// propagit how many replicas a CRD has and what each asks for, how to write
// a member's share back, which fields a member keeps, how to reflect and
// aggregate status, whether a copy is healthy and what it depends on.
//
// Scripts come from Git and are hostile: each call runs in a fresh Lua
// state with only the libraries Karmada's interpreter exposes (base without
// the loaders and metatable access, table, string with bounded repetition,
// math, and the kube module through require("kube")), under an instruction
// budget, an allocation budget and a timeout. A script that loops forever
// or allocates without bound stops with an *Error; nothing it does reaches
// the process beyond its budgets.
//
// Where it differs from Karmada: os.time and os.date are absent (render is
// a pure function of its inputs), print does nothing, every call starts
// from a fresh state (Karmada reuses pooled states, so a script's globals
// can leak between calls there), and a script is stopped by instruction
// count and allocation, not only by Karmada's one-second timeout.
package interpret

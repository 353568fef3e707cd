// Package controller is the hub loop of push mode: fetch the source, load
// it, probe the members, render, record Works, and hand each push member its
// Work through its own worker and queue, so a slow or unreachable member
// never delays the others. It composes the stages; the rules live in them.
//
// One reconcile:
//
//	fetch ─► load ─► probe members ─► render (previous placement from Works)
//	   │        │                              │
//	   │        └─ error: keep the last good   ▼
//	   └─ error: keep the last good     works.Put ─► member workers ─► apply ─► status
package controller

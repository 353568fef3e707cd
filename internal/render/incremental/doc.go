// Package incremental renders a fleet again and again, doing only what
// changed: it runs render's stages (place, render targets, finish, group)
// around a memo of what each stage read and gave last time, and gives the
// very Result render.Render gives on the same Input. Its state lives in its
// own tables, found by template position (keys.go); render.Binding carries
// none of it. Like render, it does no I/O.
package incremental

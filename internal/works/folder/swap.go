package folder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/propagit/propagit/internal/parallel"
)

// trashPrefix names the folders swap moves an earlier render into before
// deleting it.
const trashPrefix = ".propagit-render-old-"

// staleTrashAge is how old a trash folder must be before another render
// removes it: a render that is still deleting its own is left alone.
const staleTrashAge = 10 * time.Minute

// RemoveStaleTrash removes, from parent, the trash folders of renders that
// died while deleting an earlier render. Only real folders named by swap
// and untouched for staleTrashAge are removed; an error is not fatal to
// the render and is returned for a warning.
func RemoveStaleTrash(parent string, now time.Time) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), trashPrefix) {
			continue // e.IsDir is false for a symlink
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < staleTrashAge {
			continue
		}
		trash := filepath.Join(parent, e.Name())
		if err := os.RemoveAll(trash); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// swap puts the render written in tmp at out and then removes the earlier
// one: out is missing only between two renames (not for as long as deleting
// the earlier render takes), and if the second rename fails the earlier
// render is put back.
func swap(tmp, out string) error {
	trash, err := os.MkdirTemp(filepath.Dir(tmp), trashPrefix+"*")
	if err != nil {
		return err
	}
	old := filepath.Join(trash, "render")
	if err := os.Rename(out, old); err != nil {
		if rmErr := os.Remove(trash); rmErr != nil || !errors.Is(err, fs.ErrNotExist) {
			return errors.Join(err, rmErr)
		}
		return os.Rename(tmp, out)
	}
	if err := os.Rename(tmp, out); err != nil {
		return errors.Join(err, os.Rename(old, out))
	}
	if err := removeTree(old); err != nil {
		return fmt.Errorf("rendered into %s, but failed to remove the earlier render moved to %s: %w", out, old, err)
	}
	return os.Remove(trash)
}

// removeTree removes dir, its top-level entries (one per cluster) in
// parallel. dir sits in a folder of ours; if it is not a folder (out was
// replaced by a symlink after it was checked) only the link is removed.
func removeTree(dir string) error {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return os.Remove(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if err := parallel.Each(len(entries), func(i int) error {
		return os.RemoveAll(filepath.Join(dir, entries[i].Name()))
	}); err != nil {
		return err
	}
	return os.Remove(dir)
}

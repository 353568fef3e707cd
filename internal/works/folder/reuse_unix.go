//go:build unix

package folder

import (
	"bytes"
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// reuser links the files of one folder of an earlier render into the same
// folder of the new render when they already hold the bytes due. A re-render
// then neither allocates nor frees an inode for what did not change: on a
// filesystem without a journal ext4 skips inodes freed in the last minutes
// when it allocates one, and creating tens of thousands of files right after
// deleting as many became quadratic. The earlier render is untrusted: only a
// regular file with mode 0644 and one link, holding exactly the bytes due, is
// linked, and the link is checked to name that very file. The nil reuser
// links nothing.
type reuser struct {
	old, dir *os.File // the folder in the earlier render and in the new one
	buf      []byte
}

// newReuser returns the reuser of folder rel, written through dir, or nil
// when prev is nil or has no folder rel.
func newReuser(prev *os.Root, rel string, dir *os.Root) (*reuser, error) {
	if prev == nil {
		return nil, nil
	}
	old, err := prev.Open(rel)
	if err != nil {
		return nil, nil // nothing to reuse: every file is written
	}
	if fi, err := old.Stat(); err != nil || !fi.IsDir() {
		old.Close()
		return nil, nil
	}
	d, err := dir.Open(".")
	if err != nil {
		old.Close()
		return nil, err
	}
	return &reuser{old: old, dir: d}, nil
}

func (r *reuser) close() {
	if r != nil {
		r.old.Close()
		r.dir.Close()
	}
}

// link links name from the earlier render if it holds exactly b, and
// reports whether it did. Anything else about the earlier file (missing,
// a symlink, another content or mode, other links) means it is written anew.
func (r *reuser) link(name string, b []byte) (bool, error) {
	if r == nil {
		return false, nil
	}
	oldFD, dirFD := int(r.old.Fd()), int(r.dir.Fd())
	fd, err := unix.Openat(oldFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || uint32(st.Mode) != unix.S_IFREG|0o644 || st.Nlink != 1 || st.Size != int64(len(b)) {
		return false, nil
	}
	if !r.holds(fd, b) {
		return false, nil
	}
	if err := unix.Linkat(oldFD, name, dirFD, name, 0); err != nil {
		return false, nil // no hard links here: write it
	}
	var got unix.Stat_t
	if err := unix.Fstatat(dirFD, name, &got, unix.AT_SYMLINK_NOFOLLOW); err == nil && got.Dev == st.Dev && got.Ino == st.Ino {
		return true, nil
	}
	// The earlier file was replaced between the check and the link.
	if err := unix.Unlinkat(dirFD, name, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return false, nil
}

// holds reports whether the file open at fd, of size len(b), holds exactly
// b. One read suffices: asking for a byte more than the size catches a file
// that grew since it was measured.
func (r *reuser) holds(fd int, b []byte) bool {
	if cap(r.buf) < len(b)+1 {
		r.buf = make([]byte, len(b)+1)
	}
	n, err := unix.Read(fd, r.buf[:len(b)+1])
	return err == nil && n == len(b) && bytes.Equal(r.buf[:n], b)
}

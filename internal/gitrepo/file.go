package gitrepo

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// fileTransport wraps go-git's in-process server for file:// URLs (dialed
// as Scheme URLs, TransportURL). That
// server updates refs without checking their old value and lets a ref
// listing read a ref file another session is rewriting, so concurrent
// writers in one process could overwrite each other or fail with "ref file
// is empty". fileTransport holds a per-repository lock — shared for ref
// listings and fetches, exclusive for pushes — and refuses a push whose
// old values are not the refs' current values, as git-receive-pack does.
// Writers in different processes are not coordinated: use a real Git
// server for those.
type fileTransport struct {
	inner transport.Transport
}

var repoLocks sync.Map // cleaned repository path → *sync.RWMutex

func repoLock(ep *transport.Endpoint) *sync.RWMutex {
	l, _ := repoLocks.LoadOrStore(filepath.Clean(ep.Path), &sync.RWMutex{})
	return l.(*sync.RWMutex)
}

func (t *fileTransport) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	s, err := t.inner.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	return &uploadSession{UploadPackSession: s, lock: repoLock(ep), ep: ep}, nil
}

func (t *fileTransport) NewReceivePackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.ReceivePackSession, error) {
	s, err := t.inner.NewReceivePackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	return &receiveSession{ReceivePackSession: s, lock: repoLock(ep), ep: ep}, nil
}

type uploadSession struct {
	transport.UploadPackSession
	lock *sync.RWMutex
	ep   *transport.Endpoint
}

func (s *uploadSession) AdvertisedReferences() (*packp.AdvRefs, error) {
	return s.AdvertisedReferencesContext(context.Background())
}

func (s *uploadSession) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return s.UploadPackSession.AdvertisedReferencesContext(ctx)
}

// UploadPack serves a fetch. go-git's server fails on a "have" it does not
// know (git ignores those), which a client sends after a rejected push:
// unknown haves are dropped first.
func (s *uploadSession) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	st, err := FileLoader{}.Load(s.ep)
	if err != nil {
		return nil, err
	}
	known := req.Haves[:0:0]
	for _, h := range req.Haves {
		if st.HasEncodedObject(h) == nil {
			known = append(known, h)
		}
	}
	req.Haves = known
	return s.UploadPackSession.UploadPack(ctx, req)
}

type receiveSession struct {
	transport.ReceivePackSession
	lock *sync.RWMutex
	ep   *transport.Endpoint
}

func (s *receiveSession) AdvertisedReferences() (*packp.AdvRefs, error) {
	return s.AdvertisedReferencesContext(context.Background())
}

func (s *receiveSession) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return s.ReceivePackSession.AdvertisedReferencesContext(ctx)
}

// ReceivePack applies the push when every command's old value is the ref's
// current value; otherwise it drains the pack and reports each ref as
// rejected ("fetch first"), leaving the repository unchanged.
func (s *receiveSession) ReceivePack(ctx context.Context, req *packp.ReferenceUpdateRequest) (*packp.ReportStatus, error) {
	s.lock.Lock()
	defer s.lock.Unlock()
	stale, err := s.staleCommands(req)
	if err != nil {
		return nil, err
	}
	if !stale {
		return s.ReceivePackSession.ReceivePack(ctx, req)
	}
	if req.Packfile != nil {
		_, _ = io.Copy(io.Discard, req.Packfile)
		_ = req.Packfile.Close()
	}
	rs := packp.NewReportStatus()
	rs.UnpackStatus = "ok"
	for _, cmd := range req.Commands {
		rs.CommandStatuses = append(rs.CommandStatuses, &packp.CommandStatus{ReferenceName: cmd.Name, Status: "fetch first"})
	}
	return rs, nil
}

// staleCommands reports whether a command's old value differs from its
// ref's current value (zero when the ref does not exist).
func (s *receiveSession) staleCommands(req *packp.ReferenceUpdateRequest) (bool, error) {
	st, err := FileLoader{}.Load(s.ep)
	if err != nil {
		return false, err
	}
	for _, cmd := range req.Commands {
		cur := plumbing.ZeroHash
		ref, err := st.Reference(cmd.Name)
		switch {
		case err == nil:
			cur = ref.Hash()
		case !errors.Is(err, plumbing.ErrReferenceNotFound):
			return false, err
		}
		if cur != cmd.Old {
			return true, nil
		}
	}
	return false, nil
}

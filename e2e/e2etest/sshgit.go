package e2etest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHGitServer serves the bare repositories under a folder over SSH, as a
// Git host does: an exec request "git-upload-pack '/name.git'" (fetch) or
// "git-receive-pack '/name.git'" (push) runs the real git program on that
// repository. It lets in one client key and no other, and nothing but
// those two programs on repositories inside its folder.
type SSHGitServer struct {
	// Addr is the 127.0.0.1:port it listens on.
	Addr string
	// KnownHosts is the known_hosts line of its host key for Addr.
	KnownHosts string

	root string
	ln   net.Listener
	wg   sync.WaitGroup
}

// StartSSHGitServer serves root to the holder of client's private key
// until the test ends.
func StartSSHGitServer(t testing.TB, root string, client ssh.PublicKey) *SSHGitServer {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(key.Marshal(), client.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SSHGitServer{Addr: ln.Addr().String(), root: root, ln: ln,
		KnownHosts: knownhosts.Line([]string{knownhosts.Normalize(ln.Addr().String())}, host.PublicKey())}
	s.wg.Go(func() { s.serve(cfg) })
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// URL is the ssh:// URL of repository name (a folder under the root).
func (s *SSHGitServer) URL(name string) string { return "ssh://git@" + s.Addr + "/" + name }

func (s *SSHGitServer) serve(cfg *ssh.ServerConfig) {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Go(func() {
			defer conn.Close()
			sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
			if err != nil {
				return
			}
			defer sc.Close()
			go ssh.DiscardRequests(reqs)
			for nc := range chans {
				if nc.ChannelType() != "session" {
					_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
					continue
				}
				ch, reqs, err := nc.Accept()
				if err != nil {
					return
				}
				s.wg.Go(func() { s.session(ch, reqs) })
			}
		})
	}
}

// session runs the one exec request of a session and reports its exit
// status; anything else is refused.
func (s *SSHGitServer) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" {
			_ = req.Reply(false, nil)
			continue
		}
		cmd, ok := s.command(req.Payload)
		_ = req.Reply(ok, nil)
		if !ok {
			return
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
		code := uint32(0)
		if err := cmd.Run(); err != nil {
			code = 1
		}
		_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, code))
		return
	}
}

// command parses an exec payload into git upload-pack or receive-pack on a
// repository inside the root; ok is false for anything else.
func (s *SSHGitServer) command(payload []byte) (*exec.Cmd, bool) {
	var msg struct{ Command string }
	if err := ssh.Unmarshal(payload, &msg); err != nil {
		return nil, false
	}
	prog, arg, found := strings.Cut(msg.Command, " ")
	if !found || (prog != "git-upload-pack" && prog != "git-receive-pack") {
		return nil, false
	}
	if len(arg) < 3 || arg[0] != '\'' || arg[len(arg)-1] != '\'' || strings.Contains(arg[1:len(arg)-1], "'") {
		return nil, false
	}
	repo := filepath.Clean("/" + arg[1:len(arg)-1]) // cannot leave the root
	if repo == "/" {
		return nil, false
	}
	return exec.Command("git", strings.TrimPrefix(prog, "git-"), filepath.Join(s.root, repo)), true
}

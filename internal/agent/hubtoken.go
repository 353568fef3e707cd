package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/cluster"
)

// hubTokenFile is the file, in the agent's cache folder, the hub client
// reads its token from.
const hubTokenFile = "hub-token"

// maxTokenBytes bounds a token read back from disk.
const maxTokenBytes = 16 << 10

// HubToken keeps a pull agent's hub token alive. `propagit join --mode pull
// --hub-kubeconfig` hands the agent a ServiceAccount token of limited life
// (--hub-token-expiration) and lets that ServiceAccount request tokens for
// itself only. Once two thirds of the life have passed, HubToken requests a
// new one on the hub with the current one, puts it in File, which the hub
// client reads (rest.Config.BearerTokenFile: used within a minute, no
// restart), and writes it back into the member Secret the kubeconfig is
// mounted from, so a restarted agent starts with it.
type HubToken struct {
	// Hub reaches the hub; its token is the one in File.
	Hub *rest.Config
	// File holds the current token.
	File string
	// Secret is the member Secret holding the agent's hub kubeconfig
	// (key "kubeconfig"); empty to leave it alone.
	Secret types.NamespacedName
	// Member writes Secret.
	Member client.Client
	Log    logr.Logger
	Clock  clock.WithTicker
}

// KeepHubToken moves cfg's bearer token into a file under dir and points
// cfg at it, so that a renewed token reaches every client built from cfg.
// It returns nil when cfg has no plain bearer token to renew (client
// certificates, exec plugins, a token file someone else manages).
func KeepHubToken(cfg *rest.Config, dir string) (*HubToken, error) {
	if cfg.BearerToken == "" || cfg.BearerTokenFile != "" || cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create %s for the hub token: %w", dir, err)
	}
	file := filepath.Join(dir, hubTokenFile)
	if err := writeToken(file, cfg.BearerToken); err != nil {
		return nil, err
	}
	cfg.BearerTokenFile = file
	return &HubToken{Hub: rest.CopyConfig(cfg), File: file, Clock: clock.RealClock{}, Log: logr.Discard()}, nil
}

// Run checks the token every interval until ctx ends. A failed renewal is
// logged and tried again at the next check: the token still has a third of
// its life.
func (h *HubToken) Run(ctx context.Context, interval time.Duration) error {
	t := h.Clock.NewTicker(interval)
	defer t.Stop()
	for {
		r, err := h.Once(ctx, h.Clock.Now())
		switch {
		case err != nil:
			h.Log.Error(err, "failed to renew the hub token", "expires", r.Expires.UTC().Format(time.RFC3339))
		case r.Renewed:
			h.Log.Info("hub token renewed", "expires", r.Expires.UTC().Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Once renews the token in File when it is due at now.
func (h *HubToken) Once(ctx context.Context, now time.Time) (cluster.Renewal, error) {
	old, err := readToken(h.File)
	if err != nil {
		return cluster.Renewal{}, err
	}
	token, r, err := cluster.RenewToken(ctx, h.Hub, old, now)
	if err != nil || !r.Renewed {
		return r, err
	}
	if err := writeToken(h.File, token); err != nil {
		return r, err
	}
	if h.Secret.Name == "" {
		return r, nil
	}
	if err := h.store(ctx, old, token); err != nil {
		return r, fmt.Errorf("the renewed token is in use but a restart would read the old one: %w", err)
	}
	return r, nil
}

// store replaces old with token in the kubeconfig of h.Secret. A Secret
// that no longer holds old (a new join replaced it) is left alone, and the
// update carries the resourceVersion read, so nothing newer is overwritten.
func (h *HubToken) store(ctx context.Context, old, token string) error {
	var s corev1.Secret
	if err := h.Member.Get(ctx, h.Secret, &s); err != nil {
		return fmt.Errorf("failed to read Secret %s: %w", h.Secret, err)
	}
	kc, err := clientcmd.Load(s.Data["kubeconfig"])
	if err != nil {
		return fmt.Errorf("secret %s: unreadable kubeconfig key: %w", h.Secret, err)
	}
	replaced := false
	for _, ai := range kc.AuthInfos {
		if ai.Token == old {
			ai.Token, replaced = token, true
		}
	}
	if !replaced {
		return fmt.Errorf("secret %s no longer holds the agent's token (replaced by a new join?); left as it is", h.Secret)
	}
	b, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	s.Data["kubeconfig"] = b
	if err := h.Member.Update(ctx, &s); err != nil {
		return fmt.Errorf("failed to write the renewed token to Secret %s: %w", h.Secret, err)
	}
	return nil
}

func readToken(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("failed to read the hub token: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenBytes+1))
	if err != nil {
		return "", fmt.Errorf("failed to read the hub token from %s: %w", file, err)
	}
	if len(b) > maxTokenBytes {
		return "", fmt.Errorf("hub token file %s is larger than %d bytes", file, maxTokenBytes)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", errors.New("hub token file " + file + " is empty")
	}
	return token, nil
}

// writeToken replaces file atomically: the hub client may read it at any
// moment.
func writeToken(file, token string) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".hub-token-*")
	if err != nil {
		return fmt.Errorf("failed to write the hub token: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(token); err != nil {
		tmp.Close()
		return fmt.Errorf("failed to write the hub token: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("failed to write the hub token: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("failed to write the hub token: %w", err)
	}
	return nil
}

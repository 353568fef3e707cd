// Package join prepares a member cluster for propagit: it creates, in the
// member, a dedicated ServiceAccount with exactly the RBAC propagit needs,
// checks those credentials with a server-side dry-run, and renders the
// manifests to commit (the Cluster) or to hand to the hub (the credential
// Secret for push, the agent for pull). Unjoin removes what Join created.
//
// Every object Join creates carries the label propagit.io/joined-by=join and
// is written by server-side apply with the field manager "propagit-join";
// Unjoin deletes only objects with that label. Namespaces are created only
// when missing, so a namespace that existed before Join is never labelled and
// never deleted.
package join

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/restrict"
)

const (
	// FieldManager is the server-side apply field manager of every object
	// Join writes.
	FieldManager = "propagit-join"
	// LabelJoinedByValue is the value of workv1alpha1.LabelJoinedBy.
	LabelJoinedByValue = "join"
	// Namespace holds the ServiceAccount in the member.
	Namespace = "propagit-system"
	// CredentialsNamespace holds, on the hub, the member credential Secrets,
	// each labelled propagit.io/credentials-for=<cluster>: Karmada's
	// karmada-cluster, so existing Karmada Cluster YAML keeps its
	// secretRef; deploy/rbac grants the controller read access there only.
	CredentialsNamespace = cluster.DefaultNamespace
	// ServiceAccount is the name of the member ServiceAccount propagit uses.
	ServiceAccount = "propagit"
	// ServiceAccountUser is the username the ServiceAccount authenticates as.
	ServiceAccountUser = "system:serviceaccount:" + Namespace + ":" + ServiceAccount
)

// Mode is how the hub reaches the member.
type Mode string

const (
	// ModePush: the hub applies to the member with a token.
	ModePush Mode = "push"
	// ModePull: an agent in the member applies with its ServiceAccount.
	ModePull Mode = "pull"
)

// Options describe one member to join.
type Options struct {
	// Name is the Cluster name in Git.
	Name string
	Mode Mode
	// Region, Provider, Zones and Labels go to the Cluster manifest only.
	Region   string
	Provider string
	Zones    []string
	Labels   map[string]string
	// Namespaces, when set, limits the ServiceAccount to these namespaces
	// (plus read access to nodes and pods for the resource summary).
	Namespaces []string
	// TokenExpiration is the lifetime requested for the push token; the
	// apiserver may shorten it. The controller renews the token once two
	// thirds of it have passed.
	TokenExpiration time.Duration
	// HubTokenExpiration is the lifetime of a pull agent's hub token (CR
	// store); the agent renews it after two thirds of it (agent.HubToken).
	// It grants only the agent's own Work and status.
	HubTokenExpiration time.Duration
	// GrantBind gives the ServiceAccount bind and escalate on roles, so that
	// propagated bindings may grant more than it holds itself; set when the
	// restriction policy allows admin bindings or escalating roles
	// (WithRestrictions).
	GrantBind bool
	// CheckTimeout bounds how long the credential check waits for RBAC to
	// propagate in the apiserver's authorizer cache.
	CheckTimeout time.Duration
	// AgeKey creates (or keeps) the member's age key for SOPS-encrypted
	// objects, Secret propagit-system/sops-age, and records its recipient.
	AgeKey bool
	// Hub, for pull, says the agent reads its Work from a hub (CR store)
	// with the identity JoinHub makes.
	Hub bool
	// WorksRepo, for pull with the Git store, is the agent's works
	// repository: a URL, or a template with {cluster}.
	WorksRepo string
	// WorksPublicKey, for pull with the Git store, is the controller's
	// public key(s) (a trusted-keys file's content): the agent applies only
	// Works whose commit one of them signed.
	WorksPublicKey string
}

// DefaultTokenExpiration is the lifetime of a push token: a day, renewed
// by the controller after 16 hours. A controller stopped for longer than
// that needs a new join.
const DefaultTokenExpiration = 24 * time.Hour

// DefaultOptions returns Options with a one-day token and a 30s check.
func DefaultOptions() Options {
	return Options{Mode: ModePush, TokenExpiration: DefaultTokenExpiration, HubTokenExpiration: 30 * 24 * time.Hour, CheckTimeout: 30 * time.Second}
}

// WithRestrictions narrows what the member grants to what the restriction
// policy lets committers deploy: its namespaces when no --namespaces are
// given (exact names only: RBAC cannot bind by pattern), and bind/escalate
// only when it allows admin bindings or escalating roles, which the
// apiserver would otherwise refuse to propagit's ServiceAccount.
func (o *Options) WithRestrictions(p *restrict.Policy) error {
	o.GrantBind = p.Allows(restrict.DenyAdminBindings) || p.Allows(restrict.DenyRBACEscalation)
	if len(o.Namespaces) > 0 || p == nil || len(p.Namespaces) == 0 {
		return nil
	}
	for _, ns := range p.Namespaces {
		if strings.ContainsAny(ns, "*?[\\") {
			return fmt.Errorf("the restriction policy allows namespaces by pattern (%q), which RBAC cannot grant: list the member's namespaces with --namespaces", ns)
		}
	}
	o.Namespaces = slices.Clone(p.Namespaces)
	return nil
}

// Validate reports a missing name or an unknown mode.
func (o Options) Validate() error {
	if o.Name == "" {
		return fmt.Errorf("a cluster name is required")
	}
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("invalid cluster name %q: %s", o.Name, errs[0])
	}
	if o.Mode != ModePush && o.Mode != ModePull {
		return fmt.Errorf("unknown mode %q: want push or pull", o.Mode)
	}
	return nil
}

// Result is what Join produced: the credentials for push and the endpoint.
type Result struct {
	// APIEndpoint is the member's apiserver URL from the kubeconfig.
	APIEndpoint string
	// CABundle is the member's CA from the kubeconfig (PEM), may be empty.
	CABundle []byte
	// Token is the ServiceAccount token minted for push mode (empty for pull).
	Token string
	// TokenExpiry is when Token expires.
	TokenExpiry time.Time
	// CheckNamespace is where the dry-run Deployment was checked.
	CheckNamespace string
	// AgeRecipient is the public key of the member's age key (AgeKey).
	AgeRecipient string
}

// Join creates the ServiceAccount and RBAC in the member reached by cfg,
// mints a token (push), and checks the credentials. It is idempotent: a second
// run writes the same objects (no change) and mints a fresh token.
func Join(ctx context.Context, cfg *rest.Config, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build the member client: %w", err)
	}
	if err := ensure(ctx, cs, opts); err != nil {
		return nil, err
	}
	res := &Result{APIEndpoint: cfg.Host, CheckNamespace: checkNamespace(opts)}
	if res.CABundle, err = caBundle(cfg); err != nil {
		return nil, err
	}
	checkCfg := impersonated(cfg)
	if opts.Mode == ModePush {
		if err := mintToken(ctx, cs, opts, res); err != nil {
			return nil, err
		}
		checkCfg = tokenConfig(res)
	}
	if err := Check(ctx, checkCfg, res.CheckNamespace, opts.CheckTimeout); err != nil {
		return nil, err
	}
	if opts.AgeKey {
		if res.AgeRecipient, err = ensureAgeKey(ctx, cs, opts.Name); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// mintToken asks the TokenRequest API for a token of the ServiceAccount.
// A legacy kubernetes.io/service-account-token Secret is not used: it needs
// the token controller of kube-controller-manager, which not every member
// runs, and its token never expires.
func mintToken(ctx context.Context, cs kubernetes.Interface, opts Options, res *Result) error {
	tr := &authenticationv1.TokenRequest{}
	if secs := int64(opts.TokenExpiration / time.Second); secs > 0 {
		tr.Spec.ExpirationSeconds = &secs
	}
	out, err := cs.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, ServiceAccount, tr, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("failed to create a token for ServiceAccount %s/%s: %w", Namespace, ServiceAccount, err)
	}
	res.Token = out.Status.Token
	res.TokenExpiry = out.Status.ExpirationTimestamp.Time
	return nil
}

func checkNamespace(opts Options) string {
	if len(opts.Namespaces) > 0 {
		return opts.Namespaces[0]
	}
	return "default"
}

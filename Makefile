# propagit — one command per question. `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

KUBE_VERSION    ?= v1.37.2
PROPAGIT_CACHE  ?= $(HOME)/.cache/propagit
PROPAGIT_ASSETS ?= $(PROPAGIT_CACHE)/assets/k8s-$(KUBE_VERSION)
export PROPAGIT_ASSETS
# Every build, test and vet is static, as the image is: with cgo, test
# binaries link through gcc (kustomize imports "plugin"), which costs a
# third more CPU, and the image test would compile everything a second time.
export CGO_ENABLED = 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/propagit/propagit/internal/cli.version=$(VERSION) -X github.com/propagit/propagit/internal/cli.commit=$(COMMIT)
# Release builds: static (no cgo), reproducible paths, no symbol tables.
STATIC_LDFLAGS := -s -w $(LDFLAGS)

REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
SOURCE_URL        ?= https://github.com/propagit/propagit
IMAGE_REPO        ?= ghcr.io/propagit/propagit
IMAGE_ARCH        ?= $(shell go env GOARCH)
CA_CERTS          ?= /etc/ssl/certs/ca-certificates.crt
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

# A count, not a duration: Go 1.26's fuzz coordinator can report its own
# -fuzztime deadline as a failure (golang/go#75804); a count has no deadline.
FUZZTIME ?= 20000x
# FUZZMINIMIZE bounds the minimising of each new interesting input, which
# Go's fuzzer does for up to a minute by default with its exec count
# standing still: in make test it is what made a 20000x run take 68 s.
FUZZMINIMIZE ?= 200x
GO_TEST_TIMEOUT ?= 30m

.PHONY: help
help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

.PHONY: build
build: ## Build bin/propagit
	go build -ldflags "$(LDFLAGS)" -o bin/propagit ./cmd/propagit

.PHONY: image
image: ## Build the container image without an engine: bin/image (OCI layout) and bin/image.tar (docker archive)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -trimpath -ldflags "$(STATIC_LDFLAGS)" \
		-o bin/linux-$(IMAGE_ARCH)/propagit ./cmd/propagit
	cd hack/image && go run . -binary ../../bin/linux-$(IMAGE_ARCH)/propagit -ca-certs $(CA_CERTS) \
		-version $(VERSION) -revision $(REVISION) -source $(SOURCE_URL) -arch $(IMAGE_ARCH) \
		-repository $(IMAGE_REPO) -source-date-epoch $(SOURCE_DATE_EPOCH) \
		-oci-layout ../../bin/image -tarball ../../bin/image.tar

.PHONY: release
release: ## Static binaries for $(RELEASE_PLATFORMS) and their SHA256SUMS in bin/release
	rm -rf bin/release && mkdir -p bin/release
	for p in $(RELEASE_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
		echo "bin/release/propagit-$$os-$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags "$(STATIC_LDFLAGS)" \
			-o bin/release/propagit-$$os-$$arch ./cmd/propagit; \
	done
	cd bin/release && sha256sum propagit-* > SHA256SUMS && cat SHA256SUMS

.PHONY: test-contended
test-contended: ## Run .ci/run on clean clones 3 times (RUNS=n) with two busy loops holding both cores; fails on any failure
	./e2e/tools/contended.sh $(or $(RUNS),3)

.PHONY: test-assets
test-assets: ## Build the control-plane binaries and fetch promtool for the tests (cached in $(PROPAGIT_ASSETS)); install Debian's chromium for the dashboard test
	./e2e/tools/build-assets.sh "$(PROPAGIT_ASSETS)"

.PHONY: lint
lint: ## gofmt and go vet
	@out=$$(gofmt -l cmd internal e2e hack); if [[ -n "$$out" ]]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	go vet ./...
	cd hack/image && go vet ./...

.PHONY: test
test: test-assets lint ## Everything: lint, unit, integration against real apiservers, examples, fuzz (bounded); the slowest tests are listed
	go build -o bin/testtimes ./e2e/tools/testtimes
	go test -json -timeout $(GO_TEST_TIMEOUT) -count=1 ./... | bin/testtimes
	cd hack/image && go test -json -timeout $(GO_TEST_TIMEOUT) -count=1 ./... | ../../bin/testtimes -top 5
	$(MAKE) fuzz
	$(MAKE) soak SOAK_DURATION=2m

.PHONY: test-short
test-short: lint ## The fast loop: every test that needs no real member (go test -short)
	go test -short -count=1 ./...

SOAK_DURATION ?= 10m

.PHONY: soak
soak: test-assets ## Chaos soak for SOAK_DURATION (default 10m; SOAK_SEED replays a run; SOAK_MODE=leader: leader election and Work CRs): faults overlap, invariants are checked as it runs
	PROPAGIT_SOAK_DURATION=$(SOAK_DURATION) PROPAGIT_SOAK_SEED=$(SOAK_SEED) PROPAGIT_SOAK_MODE=$(SOAK_MODE) \
		go test -run '^TestSoak$$' -v -count=1 -timeout 3h ./e2e/soak/

.PHONY: fuzz
fuzz: ## Run each fuzz target FUZZTIME times (default 20000x; a duration like 1m works too)
	go test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/load
	go test -run '^$$' -fuzz '^FuzzLoadRepo$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/load
	go test -run '^$$' -fuzz '^FuzzImageOverride$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/override

.PHONY: bench
bench: test-assets bench-scale ## Benchmarks, with the peer they are compared with in the same run; the e2e ones on real members
	go test -run '^$$' -bench . -skip 'RenderOutVsKustomize|HelmRenderVsHelmTemplate' -benchmem -benchtime 3x -timeout 30m ./internal/render/... ./internal/diff/... ./internal/cli/... ./internal/dashboard/...
	go test -run '^$$' -bench 'HelmRenderVsHelmTemplate' -benchtime 1x -timeout 30m ./internal/cli/
	go test -run '^$$' -bench 'BenchmarkSync' -benchtime 5x -timeout 30m ./e2e/
	# Pull agents on each works store: Git shared, Git per member, Work CRs (PROPAGIT_SIM_AGENTS, PROPAGIT_SIM_DURATION scale it up)
	go test -run '^$$' -bench 'StoreAgents' -benchtime 1x -timeout 30m ./internal/works/

.PHONY: bench-scale
bench-scale: build ## Issue #18 figures: render --out vs kustomize overlays (1,000 × 100), the controller's steady state (10,000 × 100), render --summary wall and peak RSS (10,000 × 1,000)
	go test -run '^$$' -bench 'RenderOutVsKustomize' -benchtime 1x -timeout 30m ./internal/cli/
	# The controller's pass on 10,000 templates x 100 clusters: live heap between passes, a one-template commit
	go test -run '^$$' -bench 'SteadyState' -benchtime 1x -timeout 30m ./internal/controller/
	dir=$$(mktemp -d /tmp/propagit-scale.XXXXXX) && go run ./e2e/tools/fleetgen -templates 10000 -clusters 1000 -out $$dir/fleet && \
	/usr/bin/time -f 'render --summary 10000 x 1000: %e s wall, %U s user, %S s system, %M KiB peak RSS' \
		bin/propagit render --source $$dir/fleet/repo --summary | tail -1; rc=$$?; rm -rf $$dir; exit $$rc

.PHONY: clean
clean: ## Remove build outputs (the asset cache is kept; rm -rf $(PROPAGIT_CACHE) to drop it)
	rm -rf bin

CONTROLLER_GEN ?= go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0

.PHONY: generate
generate: ## Regenerate deepcopy code and the Work CRD (deploy/crds) with controller-gen
	$(CONTROLLER_GEN) object paths=./internal/api/clusterv1alpha1/... paths=./internal/api/workv1alpha1/...
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./internal/api/workv1alpha1/... output:crd:dir=./deploy/crds

EXAMPLE ?= quickstart

.PHONY: demo
demo: build test-assets ## Two local members, a Git repo of examples/$(EXAMPLE) (quickstart), the controller; Ctrl-C stops it
	go run ./e2e/demo -example $(EXAMPLE)

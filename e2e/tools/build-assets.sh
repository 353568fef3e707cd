#!/usr/bin/env bash
# build-assets.sh builds the real control-plane binaries the tests run
# (kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kwok) from
# the Go module proxy into a cache folder keyed by version, fetches
# promtool (which checks deploy/alerts) from Debian's prometheus package,
# and installs Debian's chromium (the dashboard's browser tests). A binary
# that is already there is never rebuilt.
#
# Usage: build-assets.sh DIR     (DIR is created; binaries land in DIR directly)
#
# Not -trimpath, and CGO_ENABLED=0 as the Makefile sets it for the tests:
# built with the same flags, the Kubernetes packages propagit shares with
# the control plane (k8s.io/api, apimachinery, client-go and their
# dependencies, at the same versions) are compiled once on a new machine
# and reused from the Go build cache by the test build.
set -euo pipefail

KUBE_VERSION=v1.37.2
ETCD_VERSION=v3.7.3
KWOK_VERSION=v0.8.0

dir=${1:?usage: build-assets.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)

log() { printf '[test-assets] %s\n' "$*" >&2; }

build_kube() {
	local name=$1
	local out=$dir/$name
	if [[ -x $out ]]; then log "$name $KUBE_VERSION cached"; return; fi
	log "building $name $KUBE_VERSION (kube-apiserver takes ~9 min cold on 2 cores)"
	local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
	local ld="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
	done
	local start=$SECONDS
	(cd "$here/kube" && CGO_ENABLED=0 go build -ldflags "$ld" -o "$out.tmp" "k8s.io/kubernetes/cmd/$name")
	mv "$out.tmp" "$out"
	log "built $name in $((SECONDS - start))s"
}

build_etcd() {
	local out=$dir/etcd
	if [[ -x $out ]]; then log "etcd $ETCD_VERSION cached"; return; fi
	log "building etcd $ETCD_VERSION"
	(cd "$here/etcd" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$out.tmp" .)
	mv "$out.tmp" "$out"
}

build_kwok() {
	local out=$dir/kwok
	if [[ -x $out ]]; then log "kwok $KWOK_VERSION cached"; return; fi
	log "building kwok $KWOK_VERSION"
	GOBIN=$dir/.kwok-tmp CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	mv "$dir/.kwok-tmp/kwok" "$out"
	rmdir "$dir/.kwok-tmp"
}

# fetch_promtool takes promtool out of Debian's prometheus package: apt-get
# download needs no root and installs no service. promtool is the only file
# kept. A failure stops the script: the alert tests must not skip in CI.
fetch_promtool() {
	local out=$dir/promtool
	if [[ -x $out ]]; then log "promtool cached: $("$out" --version 2>&1 | head -n1)"; return; fi
	log "fetching promtool from Debian's prometheus package (~19 MB)"
	local tmp
	tmp=$(mktemp -d)
	if ! (cd "$tmp" && apt-get download prometheus >&2); then
		rm -rf "$tmp"
		log "ERROR: 'apt-get download prometheus' failed; promtool is required to check deploy/alerts."
		log "       Run 'apt-get update' (or fix the apt sources), then run make test-assets again."
		exit 1
	fi
	dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb | tar -x -C "$tmp" --wildcards '*/usr/bin/promtool'
	mv "$tmp/usr/bin/promtool" "$out.tmp"
	rm -rf "$tmp"
	mv "$out.tmp" "$out"
	log "fetched $("$out" --version 2>&1 | head -n1)"
}

# install_chromium installs Debian's chromium, the headless browser of the
# dashboard's browser tests, in the background: apt is bound by the network
# and the disk, the builds by the CPU, so on a new machine they overlap.
# wait_background reports its outcome.
chromium_pid=
chromium_log=
install_chromium() {
	if [[ -x /usr/bin/chromium ]]; then return; fi
	log "installing Debian's chromium in the background (headless browser of TestDashboardBrowser)"
	local sudo=
	[[ $(id -u) == 0 ]] || sudo=sudo
	chromium_log=$(mktemp)
	# Another apt (unattended upgrades, an earlier run of this script) may
	# hold dpkg's lock: wait for it rather than fail.
	local lock=(-o DPkg::Lock::Timeout=600)
	( $sudo apt-get "${lock[@]}" update -qq && $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends chromium ) >"$chromium_log" 2>&1 &
	chromium_pid=$!
}

# download_modules fetches the modules of propagit itself in the background,
# for the same reason: the test build then finds them there.
modules_pid=
modules_log=
download_modules() {
	if [[ -x $dir/kube-apiserver ]]; then return; fi # not a new machine
	modules_log=$(mktemp)
	(cd "$here/../.." && go mod download) >"$modules_log" 2>&1 &
	modules_pid=$!
}

wait_background() {
	if [[ -n $modules_pid ]] && ! wait "$modules_pid"; then
		log "WARNING: go mod download failed (the test build downloads what it needs):"
		cat "$modules_log" >&2
	fi
	if [[ -n $chromium_pid ]]; then
		if ! wait "$chromium_pid"; then
			cat "$chromium_log" >&2
			log "ERROR: installing chromium failed; the dashboard's browser tests need /usr/bin/chromium."
			exit 1
		fi
		log "chromium installed: $(/usr/bin/chromium --version 2>/dev/null || echo '?')"
	fi
	rm -f "$chromium_log" "$modules_log"
}

fetch_promtool # first: apt-get download must not race the install's apt-get update
install_chromium
download_modules
build_etcd
build_kube kube-apiserver
build_kube kube-controller-manager
build_kube kube-scheduler
build_kwok
wait_background
log "assets ready in $dir"

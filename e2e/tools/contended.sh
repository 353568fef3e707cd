#!/usr/bin/env bash
# contended.sh runs the whole suite, .ci/run on a clean clone of HEAD,
# RUNS times in a row while two busy loops hold both cores of this
# machine: the suite must pass on a loaded CI machine, not only on a quiet
# one. It prints each run's result and wall time and exits non-zero when
# any run failed.
#
# Usage: contended.sh [RUNS]   (default 3; logs in ${TMPDIR:-/tmp}/propagit-contended)
set -euo pipefail

runs=${1:-3}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
out=${TMPDIR:-/tmp}/propagit-contended
rm -rf "$out" && mkdir -p "$out"

busy=()
stop_busy() { ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null; wait 2>/dev/null || true; }
trap stop_busy EXIT
for _ in 1 2; do
	( while :; do :; done ) &
	busy+=($!)
done

failed=0
for i in $(seq 1 "$runs"); do
	git clone -q "$repo" "$out/clone-$i"
	start=$SECONDS
	if (cd "$out/clone-$i" && bash .ci/run) >"$out/run-$i.log" 2>&1; then
		result=passed
	else
		result=FAILED
		failed=$((failed + 1))
	fi
	printf 'run %d/%d: %s in %dm%02ds (log: %s)\n' "$i" "$runs" "$result" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$out/run-$i.log"
	rm -rf "$out/clone-$i"
done
printf '%d of %d runs failed, with two busy loops holding both cores\n' "$failed" "$runs"
((failed == 0))

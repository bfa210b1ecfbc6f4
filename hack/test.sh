#!/usr/bin/env bash
# The whole test suite, on a fresh machine that has Go (and Debian's apt, for
# the three programs below):
#
#   1. installs what the tests run that Go does not build, if it is missing:
#        prometheus  Debian's prometheus: a real Prometheus scrapes the plugin (internal/metrics) and fires the monitor's alert (internal/cli)
#        chromium    Debian's chromium: the HTML report in a real headless browser (internal/report)
#        tmux        Debian's tmux: the dashboard as a person sees it (hack/tui-check.sh)
#      As root it runs apt-get; otherwise with sudo if sudo needs no password.
#      Otherwise it stops at once, before any build, naming every missing
#      package and the command that installs them.
#   2. builds the test cluster (etcd, kube-apiserver, kubectl and
#      kube-controller-manager from Go
#      modules, hack/tools) into .cache/testcluster, once;
#   3. compiles the tests' packages with -race beside that build, then runs
#      go test -race ./... (real etcd and kube-apiserver on 127.0.0.1);
#   4. runs the dashboard in tmux (hack/tui-check.sh);
#   5. prints how long each step took.
#
#   hack/test.sh                 everything
#   hack/test.sh -run Proxy      extra arguments go to go test
#
# Environment: TEST_TIMEOUT (go test -timeout, default 30m), TEST_PACKAGES
# (default ./...), TEST_P (packages tested at once, default 4: most of the
# end-to-end tests' time is spent waiting on a server, a timer or a restart,
# so more packages than cores keeps the cores busy).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
step_started=$SECONDS
timings=()
step() {
  if [ -n "${step_name:-}" ]; then timings+=("$(printf '%-34s %4ds' "$step_name" $((SECONDS - step_started)))"); fi
  step_name=$1
  step_started=$SECONDS
  echo "--- $1"
}
# On any exit, what each step took: the first run builds, later runs reuse.
report() {
  local rc=$?
  step "done"
  if [ $rc -eq 0 ]; then echo "test: passed in $((SECONDS - started))s"; else echo "test: FAILED (exit $rc) after $((SECONDS - started))s"; fi
  printf '    %s\n' "${timings[@]}"
}
trap report EXIT

command -v go >/dev/null || { echo "test: go is not on PATH: install Go 1.26 or later (https://go.dev/doc/install)" >&2; exit 1; }

# Each program, the Debian package that has it, and who needs it.
missing=()
need() { # need COMMAND PACKAGE [ALTERNATIVE COMMANDS...]
  local cmd pkg=$2
  for cmd in "$1" "${@:3}"; do
    command -v "$cmd" >/dev/null && return 0
  done
  missing+=("$pkg")
}
need prometheus prometheus
# WATCHCACHE_CHROMIUM names a browser of your own (internal/report's tests use it).
[ -n "${WATCHCACHE_CHROMIUM:-}" ] || need chromium chromium chromium-browser google-chrome google-chrome-stable
need tmux tmux

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    {
      echo "test: missing: ${missing[*]}"
      echo "  the tests run these programs; install them first (as root, or ask someone who can):"
      echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}"
      echo "  then run hack/test.sh again"
    } >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null; then
    echo "test: missing: ${missing[*]}, and there is no apt-get here: install them with this system's package manager" >&2
    exit 1
  fi
  step "installing ${missing[*]} (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The cluster's build and the compilation of what the tests build run side
# by side: both are needed, and neither waits on the other. The builder
# (hack/testcluster/build) imports only the standard library, so the servers'
# build starts at once. The tests' packages are compiled with -race, not
# linked nor run: go list -export compiles each package (the tests' own
# included) into Go's build cache, where go test finds them below; it only
# links each test binary, once, and no test's timeout includes a build.
step "building the test cluster and compiling the tests"
go run ./hack/testcluster/build >/dev/null &
cluster_pid=$!
if ! go list -race -test -deps -export ${TEST_PACKAGES:-./...} ./cmd/kubectl-watchcache ./hack/testcluster >/dev/null; then
  kill "$cluster_pid" 2>/dev/null || true
  exit 1
fi
wait "$cluster_pid"

step "go test -race ${TEST_PACKAGES:-./...} $*"
# -count=1: every test runs; a cached result would make a second run's time a lie.
go test -race -count=1 -p "${TEST_P:-4}" -timeout "${TEST_TIMEOUT:-30m}" ${TEST_PACKAGES:-./...} "$@"

if [ $# -eq 0 ]; then
  step "the dashboard in tmux (hack/tui-check.sh)"
  bash hack/tui-check.sh
fi

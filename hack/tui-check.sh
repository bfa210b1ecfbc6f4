#!/usr/bin/env bash
# tui-check: runs the dashboard the way a user sees it. It builds
# ./cmd/kubectl-watchcache (with -race), replays the bundled demo trace in a detached tmux
# pane of 120x40, captures the screen and checks that the health gauges and a
# relist are on it. The tmux sessions are always killed.
#
#   hack/tui-check.sh          check
#   hack/tui-check.sh --save   check, and write the capture to docs/screen.txt
#
# Environment: TUI_CHECK_TRACE (default testdata/traces/demo.jsonl),
# TUI_CHECK_WAIT seconds before the first capture (default 4),
# TUI_CHECK_TIMEOUT seconds to wait for everything to show (default 30).
#
# Once the relist is on the screen, the header counts the missed-deletes
# finding it raised; f opens the findings pane, which lists it, enter shows
# its evidence and esc and f go back.
#
# Then it replays the bundled trace of three resources (testdata/traces/several.jsonl)
# at 80x24 and at 160x48: the overview must show a row per resource and the
# totals; j and enter open the second resource's dashboard, esc comes back.
# Then it pauses, steps, speeds up, jumps and rewinds a replay of the demo trace, and replays the
# proxy's bundled trace (testdata/traces/proxy.jsonl): its stream's row names the
# client, and space pauses it.
#
# Last it replays the demo trace again and plays it: space pauses it (the
# position in recorded time stays put), → steps it to the next request or
# decision (it stays paused), + doubles the speed.
#
# And it runs the proxy live (proxy --port 0) against a test cluster it
# starts (./hack/testcluster, built and run as "up"; its binaries are those of
# WATCHCACHE_TESTCLUSTER_BIN, built by the tests when missing): the empty
# dashboard says where it serves and the KUBECONFIG= to use, its uptime
# ticks, and its footer offers no r or a. Then, against the same cluster,
# `kubectl watchcache configmaps -A --once`, then `--duration 3s`: each ends
# by itself and must keep its last screen, saying so in the footer; ? and esc
# look through it, and q quits. Then `configmaps -n no-such-namespace`: its footer warns
# that the namespace does not exist. The cluster is always stopped.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
fail() { echo "tui-check: $*" >&2; exit 1; }

save=false
for arg in "$@"; do
  case "$arg" in
    --save) save=true ;;
    -h|--help) usage; exit 0 ;;
    *) echo "tui-check: unknown argument $arg" >&2; usage >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.."
trace=${TUI_CHECK_TRACE:-testdata/traces/demo.jsonl}
wait_first=${TUI_CHECK_WAIT:-4}
timeout=${TUI_CHECK_TIMEOUT:-30}

command -v tmux >/dev/null || fail "tmux is not installed (e.g. apt-get install tmux)"
[[ -f "$trace" ]] || fail "trace $trace not found"

tmp=$(mktemp -d)
session="" errfile="" cluster_pid=""
sessions=()
cleanup() {
  for s in "${sessions[@]}"; do tmux kill-session -t "$s" 2>/dev/null || true; done
  if [[ -n "$cluster_pid" ]]; then
    kill -TERM "$cluster_pid" 2>/dev/null || true
    wait "$cluster_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# -race, as go test -race builds the tests: after hack/test.sh's go test the
# packages are compiled already (only the links are left), and a data race
# in the dashboard fails the check.
echo "tui-check: building ./cmd/kubectl-watchcache (-race)"
go build -race -o "$tmp/kubectl-watchcache" ./cmd/kubectl-watchcache

# start NAME WIDTHxHEIGHT TRACE: replays TRACE in a new detached tmux session,
# which becomes the one capture and await read. The pane outlives the program
# (sleep), so an early exit is captured, not lost. Sessions stay until the
# cleanup (killing the server's last session races with starting the next).
start() {
  run "$1" "$2" "replay '$3' --speed 1"
  echo "tui-check: replaying $3 in tmux session $session ($2)"
}
# run NAME WIDTHxHEIGHT ARGS: runs the plugin with ARGS (shell words) as start does.
run() {
  session="tui-check-$$-$1"
  sessions+=("$session")
  tmux new-session -d -s "$session" -x "${2%x*}" -y "${2#*x}" \
    "TERM=xterm-256color '$tmp/kubectl-watchcache' $3 2>'$tmp/stderr-$1'; echo \"[exited with status \$?]\"; sleep 3600"
  errfile="$tmp/stderr-$1"
}
capture() { tmux capture-pane -p -t "$session" >"$tmp/capture" || fail "capture-pane failed: is the session gone?"; }
# dump shows what was on the screen and the program's stderr.
dump() {
  echo "---- capture ----" >&2; cat "$tmp/capture" >&2
  if [[ -s "$errfile" ]]; then echo "---- stderr ----" >&2; cat "$errfile" >&2; fi
}
# await PATTERN WHAT: capture until the screen matches the extended regexp.
await() {
  local deadline=$((SECONDS + timeout))
  while :; do
    capture
    if grep -qE -- "$1" "$tmp/capture"; then return 0; fi
    if grep -q '^\[exited with status' "$tmp/capture" || (( SECONDS >= deadline )); then
      dump
      fail "after $((SECONDS))s the screen lacks $2 (/$1/)"
    fi
    sleep 0.2
  done
}

start demo 120x40 "$trace"

# What must be on the screen: the gauge labels the dashboard renders, the
# replay badge, and evidence of a relist (the relists gauge above zero, a
# RELIST log entry, or the Relist diff pane showing one).
labels=("objects" "bookmark" "last RV" "410 Gone" "relists" "UID mismatch"
        "watch restarts" "duplicates" "backoffs" "apply latency" "REPLAY")
relist_re='relists +[1-9]|RELIST |relist at rv'

missing=()
check() {
  missing=()
  for l in "${labels[@]}"; do
    grep -qF -- "$l" "$tmp/capture" || missing+=("$l")
  done
  grep -qE -- "$relist_re" "$tmp/capture" || missing+=("a relist (/$relist_re/)")
  [[ ${#missing[@]} -eq 0 ]]
}

sleep "$wait_first"
deadline=$((SECONDS + timeout))
while :; do
  capture
  if check; then break; fi
  if grep -q '^\[exited with status' "$tmp/capture" || (( SECONDS >= deadline )); then
    dump
    fail "after $((SECONDS))s the screen lacks: ${missing[*]}"
  fi
  sleep 0.5
done

if $save; then
  mkdir -p docs
  cp "$tmp/capture" docs/screen.txt
  echo "tui-check: saved the capture to docs/screen.txt"
fi
echo "tui-check: ok: gauges and a relist are on the screen"

# The findings: the demo's relist raises missed-deletes; the header counts
# it, f opens the pane, enter shows its evidence, esc and f go back.
await '1 finding \(warning\)' "the header's count of findings"
tmux send-keys -t "$session" f
await 'findings · 1 finding · newest first' "the findings pane after f"
await 'warning +missed-deletes' "the missed-deletes finding in the pane"
tmux send-keys -t "$session" Enter
await 'Finding missed-deletes +warning' "the finding's evidence after enter"
await 'what to do' "what to do about it"
tmux send-keys -t "$session" Escape
await 'findings · 1 finding · newest first' "the findings pane again after esc"
tmux send-keys -t "$session" f
await 'last RV' "the dashboard again after f"
echo "tui-check: ok: f lists the demo's missed-deletes finding, enter shows its evidence, esc and f go back"

several=testdata/traces/several.jsonl
[[ -f "$several" ]] || fail "trace $several not found"
for size in 80x24 160x48; do
  start "several-$size" "$size" "$several"
  await '3 resources' "the overview's resource count"
  for row in '^. configmaps ' '^. deployments\.apps ' '^. widgets\.example' '^  total '; do
    await "$row" "the overview row /$row/"
  done
  tmux send-keys -t "$session" j Enter
  await 'deployments\.v1\.apps( Deployment)? · ' "deployments' dashboard header"
  await 'last RV' "the dashboard's gauges"
  tmux send-keys -t "$session" Escape
  await '3 resources' "the overview again after esc"
  echo "tui-check: ok: the overview at $size, enter and esc"
done

# The player: pause, step and speed on a second replay of the same trace.
start player 120x40 "$trace"
# position is the badge's position in recorded time: "03:43:05 / 03:43:16 · 14%".
position() { grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2} / [0-9]{2}:[0-9]{2}:[0-9]{2} · [0-9]+%' "$tmp/capture" | head -1; }

await 'REPLAY +▶ ×1 ' "the replay playing at ×1"
tmux send-keys -t "$session" Space
await '⏸ paused ×1 ' "the replay paused after space"
paused_at=$(position)
[[ -n "$paused_at" ]] || fail "no position in recorded time on the paused screen"
sleep 2
capture
[[ "$(position)" == "$paused_at" ]] || fail "paused at $paused_at, the position moved to $(position) within 2s"
grep -qF "⏸ paused" "$tmp/capture" || fail "the replay is no longer paused"

# Steps until the position moves: each stops at a request or a decision,
# paused again.
moved=""
for _ in $(seq 1 40); do
  tmux send-keys -t "$session" Right
  await 'stepping to the next request or decision' "the step's status"
  sleep 0.3
  capture
  grep -qF "⏸ paused" "$tmp/capture" || { cat "$tmp/capture" >&2; fail "a step left the replay playing"; }
  if [[ "$(position)" != "$paused_at" ]]; then moved=$(position); break; fi
done
[[ -n "$moved" ]] || fail "40 steps did not move the replay from $paused_at"
sleep 1
capture
[[ "$(position)" == "$moved" ]] || fail "after the steps, paused at $moved, the position moved on to $(position)"

tmux send-keys -t "$session" +
await '⏸ paused ×2 ' "the speed doubled by +"
echo "tui-check: ok: space paused the replay at $paused_at, → stepped it to $moved and it stayed paused, + made it ×2"

# 9 jumps ahead; 1 is behind it: the replay starts again and runs to 10%.
tmux send-keys -t "$session" Space 9
await '· (9[0-9]|100)%' "the jump to 90%"
jumped=$(position)
tmux send-keys -t "$session" 1
await 'REPLAY +▶ ×2 .*· ([1-8][0-9])%' "the replay rewound behind 90% and playing at ×2"
echo "tui-check: ok: 9 jumped to $jumped, and 1 rewound the replay to $(position)"

# The proxy's trace replays as recorded: the observed overview, a row per
# client stream naming the client, and the player pauses it too.
observed=testdata/traces/proxy.jsonl
[[ -f "$observed" ]] || fail "trace $observed not found"
start observed 120x40 "$observed"
await 'observing recorded traffic, as recorded' "the observed title"
await '^. configmaps +kubectl' "the stream's row naming its client"
tmux send-keys -t "$session" Space
await '⏸ paused ×1 ' "the observed replay paused after space"
echo "tui-check: ok: the proxy's trace shows its client's stream, and space pauses it"

# The proxy, live: a test cluster, and the proxy in front of it with no
# client yet.
echo "tui-check: starting a test cluster (./hack/testcluster up)"
go build -race -o "$tmp/testcluster" ./hack/testcluster
: >"$tmp/cluster.out"
"$tmp/testcluster" up >"$tmp/cluster.out" 2>"$tmp/cluster.err" &
cluster_pid=$!
deadline=$((SECONDS + 120))
until grep -q '^export KUBECONFIG=' "$tmp/cluster.out"; do
  if ! kill -0 "$cluster_pid" 2>/dev/null || (( SECONDS >= deadline )); then
    tail -20 "$tmp/cluster.err" >&2
    fail "the test cluster did not start"
  fi
  sleep 0.5
done
kubeconfig=$(sed -n 's/^export KUBECONFIG=//p' "$tmp/cluster.out")
run proxy 120x40 "proxy --port 0 --kubeconfig '$kubeconfig'"
echo "tui-check: running the proxy live in tmux session $session (120x40)"
await '0 observed streams' "the proxy's empty overview"
await 'serves on http://127\.0\.0\.1:[0-9]+' "the address the proxy serves on (127.0.0.1:)"
await 'KUBECONFIG=' "the KUBECONFIG= to point a program at the proxy"
uptime() { grep -oE 'up [0-9][0-9.hms]*' "$tmp/capture" | head -1; }
first_up=$(uptime)
[[ -n "$first_up" ]] || { dump; fail "no uptime on the proxy's screen"; }
deadline=$((SECONDS + 10))
until [[ "$(uptime)" != "$first_up" ]]; do
  (( SECONDS < deadline )) || { dump; fail "the uptime stayed at '$first_up' for 10s"; }
  sleep 0.5
  capture
done
if grep -qE 'force relist|audit now|r relist|a audit' "$tmp/capture"; then
  dump
  fail "the proxy's footer offers r or a, which cannot act on another program's reflector"
fi
echo "tui-check: ok: the proxy's empty dashboard says how to connect, its uptime ticks ($first_up, then $(uptime)), and it offers no r or a"

# A live run that ends by itself (--once, --duration) keeps its last screen,
# to be looked through, until q.
for live in "once:--once" "duration:--duration 3s"; do
  name=${live%%:*} flags=${live#*:}
  run "$name" 120x40 "configmaps -A $flags --kubeconfig '$kubeconfig'"
  echo "tui-check: running kubectl watchcache configmaps -A $flags live in tmux session $session (120x40)"
  await 'run ended' "the footer of the ended run ($flags)"
  await 'LIVE ended' "the LIVE ended badge ($flags)"
  await 'objects +[1-9]' "the objects gauge of the final screen ($flags)"
  sleep 2
  capture
  if grep -q '^\[exited with status' "$tmp/capture" || ! grep -qF 'run ended' "$tmp/capture"; then
    dump
    fail "the ended run's screen ($flags) did not stay"
  fi
  tmux send-keys -t "$session" '?'
  await 'Reading the screen' "the help of the ended run ($flags)"
  # ? closes the help too (an Escape followed by q would reach it as alt+q).
  tmux send-keys -t "$session" '?'
  await '── health' "the ended run's dashboard again after the help ($flags)"
  capture
  if grep -q '^\[exited with status' "$tmp/capture"; then
    dump
    fail "a key on the ended run's screen ($flags) quit it"
  fi
  tmux send-keys -t "$session" q
  await '^\[exited with status 0\]' "the exit after q ($flags)"
  echo "tui-check: ok: the live run with $flags kept its final screen to look through, then exited 0 on q"
done

# A namespace that does not exist is watched, with a warning: on stderr,
# which the dashboard covers, and at the start in its footer.
run nons 120x40 "configmaps -n no-such-namespace --kubeconfig '$kubeconfig'"
echo "tui-check: running kubectl watchcache configmaps -n no-such-namespace live in tmux session $session (120x40)"
await 'warning: namespace "no-such-namespace" not found' "the missing namespace's warning in the footer"
tmux send-keys -t "$session" q
await '^\[exited with status 0\]' "the exit after q (missing namespace)"
echo "tui-check: ok: the dashboard of a missing namespace warns in its footer"

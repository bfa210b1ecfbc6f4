#!/usr/bin/env bash
# Installs the plugin the way krew users get it, and runs it: goreleaser
# builds the release archive for this machine's platform, render-krew writes
# the krew manifest with that archive's sha256, krew v0.4.3 (built from the Go
# module proxy) installs it into a temporary KREW_ROOT, and
# "kubectl watchcache version", run by the test harness's kubectl, must print
# the version goreleaser stamped in.
#
# Nothing here needs more network than the Go module proxy:
#   - goreleaser runs "release --snapshot --skip=docker", which publishes
#     nothing and builds no image (no docker here: internal/release builds
#     the image offline and checks it). The only
#     change from .goreleaser.yaml is that its build is narrowed to this
#     platform (goos/goarch) and dist goes to the temporary directory, so its
#     own archive step builds the one archive krew needs from the same
#     archives section a release uses.
#   - "krew install --manifest=FILE" does not update krew's plugin index (the
#     git clone of krew-index from GitHub; install's PreRunE skips it when
#     --manifest is given), and "--archive=FILE" replaces the download of the
#     manifest's URI. krew still checks the archive against the manifest's
#     sha256. The upgrade check (a GitHub API call) is off for a krew built
#     without a version tag, and KREW_NO_UPGRADE_CHECK says so explicitly.
#
#	bash hack/krew-install-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "krew-install-check: FAIL: $*" >&2; exit 1; }
step() { echo "krew-install-check: $*"; }
# quietly runs a command, printing its output only when it fails.
quietly() {
  local log="$tmp/step.log"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "$*"
  fi
}

goos=$(go env GOOS)
goarch=$(go env GOARCH)
[ "$goos" != windows ] || fail "krew on windows installs a .zip archive; this check handles tar.gz only"
archive_name="kubectl-watchcache_${goos}_${goarch}.tar.gz"

step "goreleaser release --snapshot for $goos/$goarch"
sed -e "s/^    goos: \[.*\]\$/    goos: [$goos]/" -e "s/^    goarch: \[.*\]\$/    goarch: [$goarch]/" \
  .goreleaser.yaml >"$tmp/goreleaser.yaml"
printf 'dist: %s\n' "$tmp/dist" >>"$tmp/goreleaser.yaml"
grep -qx "    goos: \[$goos\]" "$tmp/goreleaser.yaml" && grep -qx "    goarch: \[$goarch\]" "$tmp/goreleaser.yaml" ||
  fail "could not narrow .goreleaser.yaml's build to $goos/$goarch (its goos/goarch lines changed shape)"
quietly go run github.com/goreleaser/goreleaser/v2@v2.15.1 release --snapshot --clean --skip=docker --config "$tmp/goreleaser.yaml"
archives=$(cd "$tmp/dist" && ls -- *.tar.gz *.zip 2>/dev/null || true)
[ "$archives" = "$archive_name" ] || fail "want the one archive $archive_name in dist, got: ${archives:-none}"
archive="$tmp/dist/$archive_name"
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$tmp/dist/metadata.json")
[ -n "$version" ] || fail "no version in $tmp/dist/metadata.json"

step "the archive holds the plugin, its completion script, README.md and LICENSE"
contents=$(tar -tzf "$archive" | sort | tr '\n' ' ')
for f in LICENSE README.md kubectl-watchcache kubectl_complete-watchcache; do
  case " $contents" in *" $f "*) ;; *) fail "$archive_name lacks $f (it has: $contents)" ;; esac
done

step "render the krew manifest with the archive's sha256"
quietly go run ./hack/render-krew -archive "$archive" "v$version" "$tmp"
manifest="$tmp/watchcache.yaml"
sum=$(sha256sum "$archive" | cut -d' ' -f1)
grep -q "sha256: \"$sum\"" "$manifest" || fail "the rendered manifest lacks the archive's sha256 $sum"

step "build krew v0.4.3 and find the test harness's kubectl"
mkdir "$tmp/bin"
GOBIN="$tmp/bin" quietly go install sigs.k8s.io/krew/cmd/krew@v0.4.3
mv "$tmp/bin/krew" "$tmp/bin/kubectl-krew"
kubectl=$(go run ./hack/testcluster build | sed -n 3p)
[ "$(basename "$kubectl")" = kubectl ] && [ -x "$kubectl" ] || fail "hack/testcluster build gave no kubectl (got '$kubectl')"
ln -s "$kubectl" "$tmp/bin/kubectl"

export KREW_ROOT="$tmp/krew" KREW_NO_UPGRADE_CHECK=1
export PATH="$KREW_ROOT/bin:$tmp/bin:$PATH"
# kubectl and its plugins must be the ones built here, not whatever is installed.
[ "$(command -v kubectl)" = "$tmp/bin/kubectl" ] || fail "kubectl resolves to $(command -v kubectl)"
[ "$(command -v kubectl-krew)" = "$tmp/bin/kubectl-krew" ] || fail "kubectl-krew resolves to $(command -v kubectl-krew)"

step "kubectl krew install --manifest --archive (KREW_ROOT=$KREW_ROOT)"
mkdir "$tmp/krew-tmp"
TMPDIR="$tmp/krew-tmp" quietly kubectl krew install --manifest="$manifest" --archive="$archive"
[ "$(command -v kubectl-watchcache)" = "$KREW_ROOT/bin/kubectl-watchcache" ] ||
  fail "kubectl-watchcache resolves to '$(command -v kubectl-watchcache || true)', not krew's $KREW_ROOT/bin"
[ -f "$KREW_ROOT/store/watchcache/v$version/LICENSE" ] || fail "krew did not install LICENSE with the plugin"
# (Not "kubectl krew list": it refuses to run before the index is cloned.)
[ -f "$KREW_ROOT/receipts/watchcache.yaml" ] || fail "krew wrote no install receipt for watchcache"

step "kubectl watchcache version"
out=$(kubectl watchcache version)
[ "$out" = "kubectl-watchcache v$version" ] || fail "kubectl watchcache version printed '$out', want 'kubectl-watchcache v$version' (the tag, as krew names it)"
echo "$out"
step "ok in $((SECONDS - start))s"

# The release image, built by goreleaser (dockers_v2 in .goreleaser.yaml) from
# the release's own static binary: the plugin alone, run as 65532 (non-root).
# goreleaser's build context holds each platform's binary under OS/ARCH/.
# internal/release's image test builds the same image offline from this file.
FROM scratch
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/kubectl-watchcache /kubectl-watchcache
USER 65532:65532
ENTRYPOINT ["/kubectl-watchcache"]

// Package release holds no code: its test keeps .goreleaser.yaml and
// krew-manifest.yaml consistent (every krew platform is built, and its archive
// URL matches the name goreleaser gives it).
package release

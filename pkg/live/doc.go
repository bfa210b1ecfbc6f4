// Package live is the HTTP Source of package reflector: it speaks to the
// Kubernetes API server.
//
// Source is the reflector.Source for a real cluster: it makes each LIST and
// WATCH with client-go's transport (authentication, TLS, exec plugins,
// impersonation), asks for protobuf or JSON (Options, ResolveWire) with the
// requests of package request, and decodes the answer by its Content-Type
// while the body arrives with package wire's decoders. FlowControlNames
// names the FlowSchema and PriorityLevel of a 429, reading them with the
// user's credentials.
//
// Package live is the one of the Source's packages that links client-go:
// package wire, which decodes, does not, so that packages that only read
// what the server answered (package trace, the observing proxy's decoding)
// need none of it.
package live

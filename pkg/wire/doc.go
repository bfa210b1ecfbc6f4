// Package wire speaks to the Kubernetes API server and reads what it
// answers: the HTTP Source of package reflector, and the decoders behind it.
//
// LiveSource is the reflector.Source for a real cluster: it makes each LIST
// and WATCH with client-go's transport (authentication, TLS, exec plugins,
// impersonation), asks for protobuf or JSON (LiveOptions, ResolveWire), and
// decodes the answer by its Content-Type while the body arrives, straight
// into the store's compact objects: protobuf with protowire, taking only
// ObjectMeta's kept fields; JSON in one pass with package jsonscan. Each
// byte is read once, and only the object being decoded is held, up to
// MaxObjectBytes.
//
// The same decoders read responses that someone else asked for:
// DecodeListResponse, DecodeWatchResponse and ResponseStatus decode the
// bytes an observing proxy forwards, so a response decodes the same whether
// LiveSource asked for it or watched it go by. DecodeObject,
// DecodeWatchEvent and DecodeList read the JSON a trace records.
//
// Package wire depends on package reflector for the seam's types (Page,
// WatchEvent, RequestEnd, Target, Wire, …); package reflector never imports
// it.
package wire

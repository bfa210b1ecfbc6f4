// Package wire reads what the Kubernetes API server answers: the decoders
// behind package live's HTTP Source, and behind the observing proxy.
//
// Answers are decoded by their Content-Type while the body arrives,
// straight into the store's compact objects: protobuf with protowire,
// taking only ObjectMeta's kept fields; JSON in one pass with package
// jsonscan, its keys matched exactly, as the API server's decoder matches
// them. Each byte is read once, and only the object being decoded is held,
// up to MaxObjectBytes.
//
// DecodeListResponse, DecodeWatchResponse and ResponseStatus decode the
// bytes of a response, whoever asked for it: a response decodes the same
// whether package live asked for it or the observing proxy watched it go
// by. DecodeObject and DecodeWatchEvent read the JSON a trace records (and
// a Table's rows); DecodeList reads a LIST body already held whole (the
// observing proxy's, when a Table was asked for and a list came).
// ThrottleOf reads a 429's headers.
//
// Package wire decodes and never connects: it links no client-go (package
// live does). It depends on package reflector for the seam's types (Page,
// WatchEvent, RequestEnd, …); package reflector never imports it.
package wire

package reflector

// DecodeListFrom exposes the streaming LIST decoder to the external tests.
var DecodeListFrom = decodeListFrom

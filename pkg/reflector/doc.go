// Package reflector lists and watches one Kubernetes resource the way an
// informer does, and says what it does.
//
// A Reflector asks a Source for LIST pages and WATCH streams (or a
// streaming list), follows the resourceVersion cursor, relists after 410
// Gone, backs off on errors, and applies what it receives to a
// store.Writer, whose Store the rest of a program reads. Every request and
// every decision is reported as a Note (to Config.OnNote, in the order it
// happened) and summed up in Stats; decisions are typed values
// (Decision) with one sentence each. What it records (store writes,
// counters, cursor, request history, notes) goes through a Ledger, which
// the observing proxy feeds from other clients' traffic as well, so a
// counter means the same thing for both.
//
// The reflector itself speaks no HTTP and decodes nothing: it sees only the
// Source seam (Source, Stream, Page, WatchEvent, RequestEnd, RequestOptions,
// Target, Wire). Package live's Source is the Source for a real cluster
// (client-go's transport; protobuf or JSON decoded straight into the store's
// compact objects), and package trace provides a Source that records
// another and one that replays a recording. Time comes only from
// Config.Clock, so a replay decides exactly as the recorded run did.
package reflector

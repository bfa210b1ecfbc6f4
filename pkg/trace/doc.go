// Package trace records what a reflector sees to a JSON Lines trace and
// replays it, offline, through the same reflector (docs/trace-format.md is
// the format).
//
// A Recorder wraps a reflector.Source, so the trace holds exactly what the
// reflector received, and takes its decisions as notes. A Reader streams a
// trace in bounded memory, refusing malformed or hostile lines with errors
// that name them. A Replay serves a trace back as a Source, with a virtual
// clock that follows the recorded times, and compares the replayed
// decisions with the recorded ones.
package trace

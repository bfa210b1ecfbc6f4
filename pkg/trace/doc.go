// Package trace owns the JSONL trace format (version 1): the Recorder that
// wraps a reflector Source and writes what it sees, the streaming Reader, and
// the replay Source that serves a recorded trace to the same reflector.
package trace

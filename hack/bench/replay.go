package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// replayResult is the replay measurement: one trace, replayed and decoded reps times.
type replayResult struct {
	// Objects listed at the start of the trace, watch events after it, lines and bytes of the file.
	Items, Events, Lines int
	Bytes                int64
	// Recorded is how many of the events were recorded live (the rest repeat them with new resourceVersions).
	Recorded int
	// Replay and Floor are the times of each repetition.
	Replay, Floor []time.Duration
}

// measureReplay records a live trace of an initial list of n objects and a
// few seconds of writes, grows its watch to the configured number of events
// by repeating the recorded events with fresh resourceVersions, then times
// session.NewReplay(path, 0).Run against decoding the same lines with
// encoding/json into trace.Line.
func measureReplay(ctx context.Context, e *env, n int) (*replayResult, error) {
	recorded := filepath.Join(e.tmp, "recorded.jsonl")
	if err := recordLive(ctx, e, n, recorded, trace.ObjectsMetadata); err != nil {
		return nil, err
	}
	path := filepath.Join(e.tmp, "replay.jsonl")
	defer os.Remove(path)
	rr, err := growTrace(recorded, path, e.opts.replayEvents)
	if err != nil {
		return nil, err
	}
	logf("replay: %d items and %d events (%d recorded live), %.0f MB", rr.Items, rr.Events, rr.Recorded, float64(rr.Bytes)/1e6)
	for rep := range e.opts.reps {
		runtime.GC()
		d, err := replayOnce(ctx, path, rr.Events)
		if err != nil {
			return nil, err
		}
		runtime.GC()
		f, err := decodeFloor(path, rr.Lines)
		if err != nil {
			return nil, err
		}
		logf("  rep %d replay %.2fs (%.0f events/s), decode floor %.2fs (%.0f events/s)", rep+1, d.Seconds(), float64(rr.Items+rr.Events)/d.Seconds(), f.Seconds(), float64(rr.Items+rr.Events)/f.Seconds())
		rr.Replay, rr.Floor = append(rr.Replay, d), append(rr.Floor, f)
	}
	return rr, nil
}

// recordLive records an initial list and a few seconds of writes, as
// `kubectl watchcache configmaps -A --trace` would, keeping objects as
// --trace-objects does (metadata by default, full for the --diff replay).
func recordLive(ctx context.Context, e *env, n int, path string, objects trace.ObjectMode) error {
	sess, err := session.NewLive(session.LiveConfig{
		Rest: e.cluster.Config(), TracePath: path,
		Resources: []session.ResourceConfig{{Target: configMapsTarget(),
			Reflector: reflector.Config{Strategy: reflector.StrategyList, PageSize: 500}, TraceObjects: objects}},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- sess.Run(ctx) }()
	if err := sess.Resources[0].Store().WaitUntilReady(ctx); err != nil {
		return err
	}
	if _, err = e.objects.update(ctx, time.Now().Add(3*time.Second), n); err != nil {
		return err
	}
	if err := pause(ctx, time.Second); err != nil {
		return err
	}
	cancel()
	return <-errc
}

// recordedEvent is an event line of the recorded trace, as a template.
type recordedEvent struct {
	object []byte
	rv     string
	// revision is the object's data.revision ("" when the trace kept no
	// data: metadata objects).
	revision string
}

// growTrace copies the recorded trace to out up to its last event, appends
// MODIFIED events that repeat the recorded ones with increasing
// resourceVersions until the watch has events events, then the recorded end.
// The recorded events are of objects listed or added before them, so every
// grown event modifies an existing object. Where the trace kept the objects'
// data (--trace-objects full), every other round of repeats gives
// data.revision another value, so that each grown event changes a data
// value of its object as well as its resourceVersion (what --diff finds).
func growTrace(in, out string, events int) (*replayResult, error) {
	data, err := os.ReadFile(in)
	if err != nil {
		return nil, fmt.Errorf("reading the recorded trace: %w", err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var (
		last      = -1
		watchID   int64
		lastAt    int64
		maxRV     int64
		templates []recordedEvent
		items     int
		applied   int // recorded ADDED, MODIFIED and DELETED events
	)
	for i, raw := range lines[1:] {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l trace.Line
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("recorded trace line %d: %w", i+2, err)
		}
		switch l.K {
		case trace.KindItem:
			items++
		case trace.KindEvent:
			last, watchID, lastAt = i+1, l.ID, l.At
			if l.Type != string(reflector.EventBookmark) && l.Type != string(reflector.EventError) {
				applied++
			}
			if l.Type != string(reflector.EventModified) {
				continue
			}
			var m struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
				Data struct {
					Revision string `json:"revision"`
				} `json:"data"`
			}
			if err := json.Unmarshal(l.Object, &m); err != nil {
				return nil, fmt.Errorf("recorded trace line %d: %w", i+2, err)
			}
			rv, err := strconv.ParseInt(m.Metadata.ResourceVersion, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("recorded trace line %d: resourceVersion %q: %w", i+2, m.Metadata.ResourceVersion, err)
			}
			maxRV = max(maxRV, rv)
			templates = append(templates, recordedEvent{object: l.Object, rv: m.Metadata.ResourceVersion, revision: m.Data.Revision})
		}
	}
	if len(templates) == 0 {
		return nil, errors.New("the recorded trace has no MODIFIED event to repeat")
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the replay trace: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rr := &replayResult{Items: items, Recorded: len(templates)}
	for _, raw := range lines[:last+1] {
		w.Write(raw)
	}
	rr.Lines = last // after the header
	rr.Events = applied
	at := lastAt
	var line []byte
	for j := 0; rr.Events < events; j++ {
		t := templates[j%len(templates)]
		at += 1000
		maxRV++
		oldRV := []byte(`"resourceVersion":"` + t.rv + `"`)
		newRV := []byte(`"resourceVersion":"` + strconv.FormatInt(maxRV, 10) + `"`)
		line = append(line[:0], `{"k":"event","at":`...)
		line = strconv.AppendInt(line, at, 10)
		line = append(line, `,"id":`...)
		line = strconv.AppendInt(line, watchID, 10)
		line = append(line, `,"type":"MODIFIED","object":`...)
		object := bytes.Replace(t.object, oldRV, newRV, 1)
		if t.revision != "" && (j/len(templates))%2 == 1 {
			oldRev := []byte(`"revision":"` + t.revision + `"`)
			object = bytes.Replace(object, oldRev, []byte(`"revision":"`+t.revision+`-again"`), 1)
		}
		line = append(line, object...)
		line = append(line, "}\n"...)
		w.Write(line)
		rr.Events++
		rr.Lines++
	}
	// The recorded end of the watch and the decisions after it, moved after the new events.
	for _, raw := range lines[last+1:] {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l trace.Line
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("recorded trace tail: %w", err)
		}
		at += 1000
		l.At = at
		b, err := json.Marshal(&l)
		if err != nil {
			return nil, fmt.Errorf("encoding the trace tail: %w", err)
		}
		w.Write(append(b, '\n'))
		rr.Lines++
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("writing the replay trace: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("writing the replay trace: %w", err)
	}
	rr.Bytes = fi.Size()
	return rr, nil
}

// replayOnce replays the trace as fast as possible and checks every event was applied.
func replayOnce(ctx context.Context, path string, events int) (time.Duration, error) {
	start := time.Now()
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		return 0, err
	}
	if err := sess.Run(ctx); err != nil {
		return 0, fmt.Errorf("replaying: %w", err)
	}
	d := time.Since(start)
	c := sess.Resources[0].Reflector.Stats().Counters
	if got := int(c.Added + c.Modified + c.Deleted); got != events {
		return d, fmt.Errorf("the replay applied %d watch events, the trace has %d", got, events)
	}
	return d, nil
}

// decodeFloor reads the trace's lines and decodes each with encoding/json
// into trace.Line, doing nothing else: the least any replay must do.
func decodeFloor(path string, wantLines int) (time.Duration, error) {
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("opening the trace: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		if n == 1 {
			continue // the header
		}
		var l trace.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return 0, fmt.Errorf("decoding line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading the trace: %w", err)
	}
	d := time.Since(start)
	if n-1 != wantLines {
		return d, fmt.Errorf("the decode floor read %d lines after the header, want %d", n-1, wantLines)
	}
	return d, nil
}

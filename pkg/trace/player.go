package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Speed bounds of Faster and Slower: the speed doubles up to MaxSpeed, and
// past it goes to 0 (as fast as possible); it halves down to MinSpeed.
const (
	MaxSpeed = 1024
	MinSpeed = 1.0 / 64
)

// Player controls how a replay serves its lines: pause and resume, a step to
// the next request or decision, the speed, and a jump forward in recorded
// time. The replay's reading goroutine asks it, before serving each line,
// whether the line may be served now; its methods are called from other
// goroutines (a dashboard's keys) and take effect at once, even while that
// goroutine waits. It is safe for concurrent use.
//
// Pacing follows an anchor: a wall time and the recorded time that
// corresponds to it. A line recorded at `at` is due at
// anchorWall + (at - anchorAt) / speed; every change of pace (a resume, a
// new speed, the end of a jump) moves the anchor to now and the position
// then, so a change never makes the replay catch up or fall behind.
type Player struct {
	mu sync.Mutex
	// speed: 0 as fast as possible, 1 real time, N times faster.
	speed float64
	// paused holds lines back; stepping serves them until a request or a
	// decision has been served, then pauses again.
	paused, stepping bool
	// seeking serves lines as fast as possible until seekTo.
	seeking bool
	seekTo  time.Duration
	// anchored is false until the first line: it is served at once.
	anchored   bool
	anchorWall time.Time
	anchorAt   time.Duration
	// pos is the recorded time of the last line served; served counts them.
	// pausedAt is where the pace had come to when the replay was paused
	// (between two lines: past pos), where Resume goes on from.
	pos      time.Duration
	pausedAt time.Duration
	served   int64
	// end is the recorded time of the trace's last line, when known.
	end      time.Duration
	endKnown bool
	// waiting is true while the reading goroutine is held by a pause;
	// timedWaits counts its waits for a line's time.
	waiting    bool
	timedWaits int64
	// ahead is true while the next line, recorded at next, waits for its
	// time at pace: the replay's time goes on towards it (Reached).
	ahead bool
	next  time.Duration
	// wake is closed, and replaced, at every change.
	wake chan struct{}
	// now is the wall clock.
	now func() time.Time
}

// newPlayer paces at speed on the wall clock now.
func newPlayer(speed float64, now func() time.Time) *Player {
	return &Player{speed: max(speed, 0), wake: make(chan struct{}), now: now}
}

// ErrSeekBackward is Seek's error for a time the replay has passed: a replay
// only runs forward (its reflectors cannot unlearn what they were served).
var ErrSeekBackward = errors.New("a replay only runs forward")

// changed wakes the reading goroutine; call it with mu held.
func (pl *Player) changed() {
	close(pl.wake)
	pl.wake = make(chan struct{})
}

// reanchor makes now the anchor for where the replay has come to (at,
// read before the change of pace); call it with mu held.
func (pl *Player) reanchor(at time.Duration) {
	if pl.anchored {
		pl.anchorWall, pl.anchorAt = pl.now(), at
	}
}

// Pause holds the next line back until Resume, Step or Seek; the replay's
// time stops where the pace has come to, between two lines too.
func (pl *Player) Pause() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.hold()
	pl.stepping = false
	pl.changed()
}

// hold pauses: the replay's time stays where the pace has come to.
func (pl *Player) hold() {
	if !pl.paused {
		pl.pausedAt = pl.reached()
	}
	pl.paused = true
}

// Resume serves lines again at the set speed, from where the replay is.
func (pl *Player) Resume() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	at := pl.reached()
	pl.paused, pl.stepping = false, false
	pl.reanchor(at)
	pl.changed()
}

// TogglePause pauses a running replay and resumes a paused one; it reports
// whether the replay is paused now.
func (pl *Player) TogglePause() bool {
	if pl.Paused() {
		pl.Resume()
		return false
	}
	pl.Pause()
	return true
}

// Step serves lines, as fast as possible, until the next request or decision
// (`note` line) has been served, then pauses. A running replay is paused by it.
func (pl *Player) Step() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.hold()
	pl.stepping, pl.seeking = true, false
	pl.changed()
}

// Paused reports whether the replay is paused (a step in progress counts as paused).
func (pl *Player) Paused() bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.paused
}

// Held reports whether the replay is held by a pause right now: paused, no
// step in progress, and its next line waiting (a step that has ended, or a
// pause that has caught the reading goroutine).
func (pl *Player) Held() bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.waiting && pl.paused && !pl.stepping
}

// Speed is the speed: 0 as fast as possible, 1 real time, N times faster.
func (pl *Player) Speed() float64 {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.speed
}

// SetSpeed sets the speed (0: as fast as possible; below 0 counts as 0),
// from the replay's position on.
func (pl *Player) SetSpeed(s float64) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	at := pl.reached()
	pl.speed = max(s, 0)
	pl.reanchor(at)
	pl.changed()
}

// Faster doubles the speed; past MaxSpeed it becomes 0 (as fast as
// possible), where it stays. It returns the new speed.
func (pl *Player) Faster() float64 {
	s := pl.Speed()
	switch {
	case s == 0:
	case s*2 > MaxSpeed:
		s = 0
	default:
		s *= 2
	}
	pl.SetSpeed(s)
	return s
}

// Slower halves the speed, down to MinSpeed; from 0 (as fast as possible)
// it goes to MaxSpeed. It returns the new speed.
func (pl *Player) Slower() float64 {
	s := pl.Speed()
	switch {
	case s == 0:
		s = MaxSpeed
	default:
		s = max(s/2, MinSpeed)
	}
	pl.SetSpeed(s)
	return s
}

// Seek runs the replay as fast as possible to the recorded time at (an
// offset from the trace's start), then on at the set speed; a paused replay
// resumes. A time the replay has already passed is ErrSeekBackward.
func (pl *Player) Seek(at time.Duration) error {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if at < pl.pos {
		return fmt.Errorf("%w: %s is behind the position %s", ErrSeekBackward, at, pl.pos)
	}
	pl.seeking, pl.seekTo = true, at
	pl.paused, pl.stepping = false, false
	pl.changed()
	return nil
}

// Reached is the recorded time (an offset from the trace's start) the
// replay has reached: the last line served's, or, while the next line
// waits for its time at pace, where the pace has come to, short of that
// line's time. A dashboard's clock follows it, so ages and running times go
// on between two lines as they did live; the reflectors' clock is the
// lines' (Position), which keeps what they note the same at any speed.
func (pl *Player) Reached() time.Duration {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.reached()
}

// reached is Reached; mu held. A change of pace (a speed, a pause) goes on
// from it, not from the last line served: it neither catches up nor falls
// behind.
func (pl *Player) reached() time.Duration {
	switch {
	case pl.paused:
		return max(pl.pos, pl.pausedAt)
	case !pl.ahead || pl.seeking || pl.speed <= 0:
		return pl.pos
	}
	paced := pl.anchorAt + time.Duration(min(float64(pl.now().Sub(pl.anchorWall))*pl.speed, 1<<62))
	return max(pl.pos, min(paced, pl.next))
}

// Position is the recorded time (an offset from the trace's start) of the
// last line served, and how many lines have been served.
func (pl *Player) Position() (time.Duration, int64) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.pos, pl.served
}

// End is the recorded time of the trace's last line, when known (see SetEnd).
func (pl *Player) End() (time.Duration, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.end, pl.endKnown
}

// SetEnd tells the player the recorded time of the trace's last line
// (RecordedEnd measures it), for Seek's fractions and a position's share.
func (pl *Player) SetEnd(end time.Duration) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.end, pl.endKnown = max(end, 0), true
}

// decide says whether a line recorded at `at` may be served at wall time
// now; if not, how long to wait at most (0: until a change) and the channel
// a change closes. Call it with mu held.
func (pl *Player) decide(at time.Duration, now time.Time) (serve bool, wait time.Duration, wake <-chan struct{}) {
	serve, wait, wake = pl.pace(at, now)
	pl.ahead, pl.next = wait > 0, at
	return serve, wait, wake
}

// pace is decide's answer; mu held.
func (pl *Player) pace(at time.Duration, now time.Time) (serve bool, wait time.Duration, wake <-chan struct{}) {
	switch {
	case pl.seeking && at < pl.seekTo:
		return true, 0, nil
	case pl.seeking:
		// The jump is over: pace on from its target, or hold there when
		// paused while it jumped.
		pl.seeking = false
		pl.anchored, pl.anchorWall, pl.anchorAt = true, now, pl.seekTo
		if pl.paused {
			return false, 0, pl.wake
		}
	case pl.stepping:
		return true, 0, nil
	case pl.paused:
		return false, 0, pl.wake
	}
	if !pl.anchored {
		pl.anchored, pl.anchorWall, pl.anchorAt = true, now, at
		return true, 0, nil
	}
	if pl.speed <= 0 {
		return true, 0, nil
	}
	// A very slow speed makes a wait longer than a Duration holds: it
	// waits about 146 years (1<<62 ns), not a negative time.
	due := pl.anchorWall.Add(time.Duration(min(float64(at-pl.anchorAt)/pl.speed, 1<<62)))
	if d := due.Sub(now); d > 0 {
		return false, d, pl.wake
	}
	return true, 0, nil
}

// wait blocks until the line recorded at `at` may be served, or ctx ends.
func (pl *Player) wait(ctx context.Context, at time.Duration) error {
	for {
		pl.mu.Lock()
		serve, d, wake := pl.decide(at, pl.now())
		pl.waiting = !serve && d == 0
		if d > 0 {
			pl.timedWaits++
		}
		pl.mu.Unlock()
		if serve {
			return ctx.Err()
		}
		var timeout <-chan time.Time // a timer not stopped is collected (Go 1.23 on)
		if d > 0 {
			timeout = time.After(d)
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-timeout:
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// servedLine records that the line recorded at `at`, of kind k, has been
// served: a step ends at a request or a decision.
func (pl *Player) servedLine(at time.Duration, k string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.pos = max(pl.pos, at)
	pl.served++
	pl.waiting = false
	if pl.stepping && (k == KindRequest || k == KindNote) {
		pl.stepping = false
		pl.changed()
	}
}

// tailBytes is how much of a trace's end RecordedEnd reads first.
const tailBytes = 1 << 20

// RecordedEnd is the recorded time of the trace's last line, an offset from
// its start: the largest `at` of the last complete lines of a plain file
// (read from its end), or of every line of a gzip trace or of a file whose
// last megabyte holds no complete line (read through, which ctx can stop).
func RecordedEnd(ctx context.Context, path string) (time.Duration, error) {
	if !strings.HasSuffix(path, ".gz") {
		if end, ok, err := tailEnd(path); err != nil || ok {
			return end, err
		}
	}
	rd, err := Open(path)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	var end int64
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		l, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return time.Duration(end), nil
		}
		if err != nil {
			return time.Duration(end), err
		}
		end = max(end, l.At)
	}
}

// tailEnd reads the largest `at` among the complete lines of the file's
// last megabyte; ok is false when there is none.
func tailEnd(path string) (time.Duration, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, cannotRead(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, cannotRead(path, err)
	}
	off := max(fi.Size()-tailBytes, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, false, fmt.Errorf("reading trace: %w", err)
	}
	if off > 0 {
		// The chunk's first line may start before it.
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return 0, false, nil
		}
		buf = buf[i+1:]
	}
	var end int64
	ok := false
	sc := bufio.NewScanner(bytes.NewReader(buf))
	sc.Buffer(make([]byte, 0, 64<<10), len(buf)+1)
	for sc.Scan() {
		var l struct {
			K  string `json:"k"`
			At int64  `json:"at"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.K == KindHeader || l.K == "" {
			continue // a line cut short (the trace's last), or the header
		}
		end, ok = max(end, l.At), true
	}
	return time.Duration(end), ok, nil
}

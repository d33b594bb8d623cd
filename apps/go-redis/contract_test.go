package main

import (
	"errors"
	"testing"
	"time"
)

func settingsForTest(rate float64, inFlight int, duration float64) Settings {
	return Settings{Startup: "127.0.0.1:1", Rate: rate, InFlight: inFlight, DurationS: duration,
		Keys: 10, KeyPrefix: "k", Command: "get", Seed: 1}
}

func classes(err error) (string, string) { return "E", "E kind" }

// A command that hangs past the drain is counted once, as DrainCancelled, with its issue time.
func TestDrainGivesUpOnHungCommands(t *testing.T) {
	out := newOutcomes()
	release := make(chan struct{})
	cancelled := false
	do := func(i int64, key string) error {
		if i == 0 {
			<-release
			return errors.New("late")
		}
		return nil
	}
	run(settingsForTest(100, 4, 0.1), out, make(chan struct{}), 100*time.Millisecond,
		func() { cancelled = true }, do, classes)
	close(release)
	time.Sleep(20 * time.Millisecond)
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.issued != 10 || out.succeeded != 9 || out.errors["DrainCancelled"] != 1 || len(out.errors) != 1 {
		t.Fatalf("issued %d succeeded %d errors %v", out.issued, out.succeeded, out.errors)
	}
	if !cancelled || out.firstErrorIssuedMS == nil || *out.firstErrorIssuedMS > *out.firstErrorMS-90 {
		t.Fatalf("cancelled %v first error issued %v at %v", cancelled, out.firstErrorIssuedMS, out.firstErrorMS)
	}
}

// With one permit held 100 ms at 100/s, the commands due meanwhile are skipped, not burst.
func TestCommandsDueWhileWaitingAreSkipped(t *testing.T) {
	out := newOutcomes()
	do := func(i int64, key string) error {
		if i == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	}
	run(settingsForTest(100, 1, 0.5), out, make(chan struct{}), time.Second, func() {}, do, classes)
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.skipped < 8 || out.issued < 20 || out.issued+out.skipped != 50 {
		t.Fatalf("issued %d skipped %d", out.issued, out.skipped)
	}
}

// Every command failing for the last second of the schedule is wedged; a late failure is not.
func TestWedgedSince(t *testing.T) {
	o := newOutcomes()
	o.ok(0)
	o.failed("E", "E", "x", nowMS(), false)
	since := *o.firstFailSinceOKMS
	if w := o.wedgedSince(since+1000, 1000); w == nil || *w != since {
		t.Fatalf("wedged since %v, want %d", w, since)
	}
	if w := o.wedgedSince(since+999, 1000); w != nil {
		t.Fatalf("wedged since %v, want none", *w)
	}
	o.ok(0)
	if w := o.wedgedSince(since+5000, 1000); w != nil {
		t.Fatalf("wedged after a success: %v", *w)
	}
}

// Commands that hung until the drain failed from when they were issued (just after the last
// success if that came later): a client whose commands all hang is wedged from there.
func TestHungCommandsFailFromTheirIssue(t *testing.T) {
	o := newOutcomes()
	o.ok(0)
	last := o.lastOKMS
	o.failed("CancelledError", "hung", "still in flight", last-500, true)
	if got := *o.firstFailSinceOKMS; got != last+1 {
		t.Fatalf("since %d, want %d", got, last+1)
	}
	o2 := newOutcomes()
	o2.ok(0)
	issued := o2.lastOKMS + 100
	o2.failed("CancelledError", "hung", "still in flight", issued, true)
	if w := o2.wedgedSince(issued+2000, 1000); w == nil || *w != issued {
		t.Fatalf("wedged since %v, want %d", w, issued)
	}
}

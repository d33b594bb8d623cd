// The application contract of docs/FIDELITY.md ("The application contract"), library-free: the
// settings, the pacer (command i due at start + i/rate, `in_flight` permits, late commands skipped),
// what the application saw of its commands (outcomes, first error, latency), and the output line's
// shared fields. A Go application on another library reuses this file and adds its own counts.

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const bucketMS = 250

var commands = []string{"zadd", "set", "get", "incr"}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "app: "+format+"\n", args...)
}

func nowMS() int64 { return time.Now().UnixMilli() }

// Settings are the contract's settings as understood (echoed in the output's `settings`).
type Settings struct {
	Startup         string         `json:"startup"`
	Rate            float64        `json:"rate"`
	InFlight        int            `json:"in_flight"`
	DurationS       float64        `json:"duration_s"`
	Keys            int            `json:"keys"`
	KeyPrefix       string         `json:"key_prefix"`
	Command         string         `json:"command"`
	AddressRemap    *string        `json:"address_remap"`
	SocketTimeoutS  float64        `json:"socket_timeout_s"`
	ConnectTimeoutS float64        `json:"connect_timeout_s"`
	ClientName      string         `json:"client_name"`
	Seed            uint64         `json:"seed"`
	LibraryOptions  map[string]any `json:"library_options"`
}

func parseAddr(text string) (string, error) {
	i := strings.LastIndex(text, ":")
	if i <= 0 {
		return "", fmt.Errorf("not host:port: %q", text)
	}
	if _, err := strconv.ParseUint(text[i+1:], 10, 16); err != nil {
		return "", fmt.Errorf("not host:port: %q", text)
	}
	return text, nil
}

func settingsFrom(args []string) (Settings, error) {
	s := Settings{Rate: 200, InFlight: 1, DurationS: 10, Keys: 1000, KeyPrefix: "key",
		Command: "zadd", SocketTimeoutS: 0.5, ConnectTimeoutS: 0.5, ClientName: "matrix", Seed: 1}
	if len(args) != 2 {
		return s, fmt.Errorf("usage: %s '<settings JSON>'", args[0])
	}
	if err := json.Unmarshal([]byte(args[1]), &s); err != nil {
		return s, fmt.Errorf("settings: %w", err)
	}
	s.Command = strings.ToLower(s.Command)
	if _, err := parseAddr(s.Startup); err != nil {
		return s, fmt.Errorf("startup: %w", err)
	}
	if s.AddressRemap != nil {
		if _, err := parseAddr(*s.AddressRemap); err != nil {
			return s, fmt.Errorf("address_remap: %w", err)
		}
	}
	switch {
	case !(s.Rate > 0 && s.Rate <= 100_000) || !(s.DurationS > 0 && s.DurationS <= 600):
		return s, fmt.Errorf("rate must be in (0, 100000], duration_s in (0, 600]")
	case s.InFlight < 1 || s.InFlight > 10_000 || s.Keys < 1:
		return s, fmt.Errorf("in_flight must be in [1, 10000], keys >= 1")
	case s.SocketTimeoutS <= 0 || s.ConnectTimeoutS <= 0:
		return s, fmt.Errorf("socket_timeout_s and connect_timeout_s must be > 0")
	}
	for _, c := range commands {
		if c == s.Command {
			return s, nil
		}
	}
	return s, fmt.Errorf("command must be one of %v", commands)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// quantileMS is the q-quantile of ds in milliseconds (nil when empty), as app.py's quantile_ms.
func quantileMS(ds []time.Duration, q float64) *float64 {
	if len(ds) == 0 {
		return nil
	}
	v := append([]time.Duration(nil), ds...)
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	x := v[min(len(v)-1, int(q*float64(len(v))))]
	ms := math.Round(float64(x.Microseconds())) / 1000
	return &ms
}

// Outcomes is what the application saw of its commands.
type Outcomes struct {
	mu                 sync.Mutex
	startedMS          int64
	issued, succeeded  int64
	skipped            int64
	errors             map[string]int64
	errorKinds         map[string]int64
	firstError         map[string]string
	firstErrorMS       *int64
	firstErrorIssuedMS *int64
	firstErrorHung     bool
	okBuckets          map[int64]int64
	failedBuckets      map[int64]int64
	failedIssued       map[int64]int64
	firstFailSinceOKMS *int64
	lastOKMS           int64 // 0 before the first success
	latencies          []time.Duration
}

func newOutcomes() *Outcomes {
	return &Outcomes{startedMS: nowMS(), errors: map[string]int64{}, errorKinds: map[string]int64{}, firstError: map[string]string{},
		okBuckets: map[int64]int64{}, failedBuckets: map[int64]int64{}, failedIssued: map[int64]int64{}}
}

func (o *Outcomes) bucket(t int64) int64 { return max(0, t-o.startedMS) / bucketMS }

func (o *Outcomes) ok(latency time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := nowMS()
	o.succeeded++
	o.okBuckets[o.bucket(t)]++
	o.lastOKMS = t
	o.firstFailSinceOKMS = nil
	o.latencies = append(o.latencies, latency)
}

// failed counts a command that raised: its error class, when it reached the application (now)
// and when it was issued; hung: it was still in flight when the drain ran out.
func (o *Outcomes) failed(class, kind, message string, issuedMS int64, hung bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errorKinds[kind]++
	if _, seen := o.errors[class]; !seen {
		logf("first %s: %s", class, message)
		if len(message) > 300 {
			message = message[:300]
		}
		o.firstError[class] = message
	}
	o.errors[class]++
	t := nowMS()
	b := o.bucket(t)
	o.failedBuckets[b]++
	if prev, ok := o.failedIssued[b]; !ok || issuedMS < prev {
		o.failedIssued[b] = issuedMS
	}
	if o.firstErrorMS == nil {
		o.firstErrorMS, o.firstErrorIssuedMS, o.firstErrorHung = &t, &issuedMS, hung
	} else if hung && o.firstErrorHung && issuedMS < *o.firstErrorIssuedMS {
		// Commands that hung until the drain gave up on them end at once, in no order: the first
		// error is that give-up, issued when the first of them was.
		o.firstErrorIssuedMS = &issuedMS
	}
	// A command the drain gave up on failed from when it was issued, or just after the
	// last success if that came later: the replay counts it there, and a client whose
	// commands all hang is wedged.
	since := t
	if hung {
		since = max(issuedMS, o.lastOKMS+1)
	}
	if o.firstFailSinceOKMS == nil || since < *o.firstFailSinceOKMS {
		o.firstFailSinceOKMS = &since
	}
}

// wedgedSince: the moment from which every command that ended failed, up to the end, when that
// moment is at least wedgedMinMS before the schedule ended (nil otherwise).
func (o *Outcomes) wedgedSince(issuingEndedMS, wedgedMinMS int64) *int64 {
	f := o.firstFailSinceOKMS // reset by every success
	if f == nil || *f > issuingEndedMS-wedgedMinMS {
		return nil
	}
	return f
}

func (o *Outcomes) buckets() map[string]any {
	last := int64(-1)
	for b := range o.okBuckets {
		last = max(last, b)
	}
	for b := range o.failedBuckets {
		last = max(last, b)
	}
	okv, failed, issued := []int64{}, []int64{}, []*int64{}
	for b := int64(0); b <= last; b++ {
		okv = append(okv, o.okBuckets[b])
		failed = append(failed, o.failedBuckets[b])
		if t, ok := o.failedIssued[b]; ok {
			issued = append(issued, &t)
		} else {
			issued = append(issued, nil)
		}
	}
	return map[string]any{"bucket_ms": bucketMS, "ok": okv, "failed": failed, "failed_issued": issued}
}

// Command is one application command: it returns the library's error (nil on success).
type Command func(i int64, key string) error

// ErrorClass names an error the application caught: its class, and its class with a detail.
type ErrorClass func(err error) (class, kind string)

// panicError is a panic inside a command, caught so that the application goes on.
type panicError struct{ value any }

func (p panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func safely(do Command, i int64, key string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError{v}
		}
	}()
	return do(i, key)
}

// run paces commands as the contract says until the schedule ends or stop closes, then drains the
// commands in flight for at most drain; those still in flight then are counted as failed
// (DrainCancelled) and cancel is called. It returns when the schedule ended (epoch ms).
func run(s Settings, out *Outcomes, stop <-chan struct{}, drain time.Duration, cancel func(),
	do Command, class ErrorClass) int64 {
	// The contract's seed is any 64-bit unsigned number; math/rand takes its bits as an int64.
	rng := rand.New(rand.NewSource(int64(s.Seed)))
	permits := make(chan struct{}, s.InFlight)
	period := time.Duration(float64(time.Second) / s.Rate)
	scheduled := int64(math.Ceil(s.DurationS * s.Rate))
	var wg sync.WaitGroup
	// Commands in flight: index -> (issued epoch ms); a command removes itself when it ends, and
	// the drain's give-up takes the ones left, so each command is counted exactly once.
	var flightMu sync.Mutex
	inFlight := map[int64]int64{}

	start := time.Now()
	out.startedMS = start.UnixMilli()
	sleepUntil := func(t time.Time) bool { // false when stopped
		d := time.Until(t)
		if d <= 0 {
			select {
			case <-stop:
				return false
			default:
				return true
			}
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-stop:
			return false
		case <-timer.C:
			return true
		}
	}
	due := func(i int64) time.Time { return start.Add(time.Duration(i) * period) }
	// The first command from i whose due time has not passed yet: those before it came due while
	// the pacer waited for a permit, and are skipped (no burst), whether the wait ended with a
	// permit or with the schedule.
	lateFrom := func(i int64) int64 {
		return max(i, int64(math.Ceil(float64(time.Since(start))/float64(period))))
	}

loop:
	for i := int64(0); i < scheduled; i++ {
		if !sleepUntil(due(i)) {
			break
		}
		waited, acquired := false, false
		select {
		case permits <- struct{}{}:
			acquired = true
		default:
			waited = true
			select {
			case permits <- struct{}{}:
				acquired = true
			case <-stop:
			}
		}
		select {
		case <-stop:
			if acquired {
				<-permits
			}
			if waited {
				// The schedule ended while the pacer waited.
				out.mu.Lock()
				out.skipped += min(lateFrom(i), scheduled) - i
				out.mu.Unlock()
			}
			break loop
		default:
		}
		if waited {
			late := lateFrom(i)
			out.mu.Lock()
			out.skipped += min(late, scheduled) - i
			out.mu.Unlock()
			if late >= scheduled {
				<-permits
				break
			}
			i = late
			if !sleepUntil(due(i)) {
				<-permits
				break
			}
		}
		key := fmt.Sprintf("%s:{%d}", s.KeyPrefix, rng.Intn(s.Keys))
		out.mu.Lock()
		out.issued++
		out.mu.Unlock()
		t0 := time.Now()
		flightMu.Lock()
		inFlight[i] = t0.UnixMilli()
		flightMu.Unlock()
		wg.Add(1)
		go func(i int64, key string) {
			defer wg.Done()
			err := safely(do, i, key)
			latency := time.Since(t0)
			flightMu.Lock()
			_, mine := inFlight[i]
			delete(inFlight, i)
			flightMu.Unlock()
			if mine {
				if err == nil {
					out.ok(latency)
				} else {
					cls, kind := class(err)
					out.failed(cls, kind, err.Error(), nowMS()-latency.Milliseconds(), false)
				}
			}
			<-permits
		}(i, key)
	}
	issuingEnded := nowMS()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drain):
		flightMu.Lock()
		left := inFlight
		inFlight = map[int64]int64{}
		flightMu.Unlock()
		logf("%d commands still in flight after %v: given up", len(left), drain)
		for _, issued := range left {
			out.failed("DrainCancelled", "DrainCancelled", fmt.Sprintf("still in flight after the %v drain", drain),
				issued, true)
		}
	}
	cancel()
	return issuingEnded
}

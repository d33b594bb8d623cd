// The fidelity matrix's application on go-redis (github.com/redis/go-redis/v9, NewClusterClient),
// instrumented from inside the library. It meets docs/FIDELITY.md's application contract (the
// shared part is contract.go); README.md says what each figure counts and from which hook.
//
// Usage: bin/app '<settings JSON>'   (one JSON line on stdout at the end, logs on stderr)

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"
)

const modulePath = "github.com/redis/go-redis/v9"

// Counts is what the library did, counted by its hooks.
type Counts struct {
	initializations   atomic.Int64
	initializationsOK atomic.Int64
	clusterSlotsCalls atomic.Int64
	dials             atomic.Int64
	newConnections    atomic.Int64

	mu           sync.Mutex
	calls        map[string]int64
	moved        map[string]int64
	ask          map[string]int64
	errorReplies map[string]int64
	exchanges    []time.Duration
}

func newCounts() *Counts {
	return &Counts{calls: map[string]int64{}, moved: map[string]int64{}, ask: map[string]int64{},
		errorReplies: map[string]int64{}}
}

func isClusterSlots(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 || cmd.Name() != "cluster" {
		return false
	}
	sub, _ := args[1].(string)
	return strings.EqualFold(sub, "slots")
}

// reply counts one command's outcome on one node: a reply (success, redis.Nil, MOVED, ASK or
// another error reply) or no reply (a network error: nothing counted). It says whether there was
// a reply that makes an exchange (success, MOVED, ASK), as app.py counts them.
func (c *Counts) reply(cmd redis.Cmder, err error) bool {
	name := cmd.Name()
	var rerr redis.Error
	switch {
	case err == nil || err == redis.Nil:
	case errors.As(err, &rerr):
		msg := rerr.Error()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.calls[name]++
		switch {
		case strings.HasPrefix(msg, "MOVED "):
			c.moved[name]++
			return true
		case strings.HasPrefix(msg, "ASK "):
			c.ask[name]++
			return true
		default:
			c.errorReplies[name]++
			return false
		}
	default:
		return false
	}
	c.mu.Lock()
	c.calls[name]++
	c.mu.Unlock()
	return true
}

func (c *Counts) exchange(d time.Duration) {
	c.mu.Lock()
	c.exchanges = append(c.exchanges, d)
	c.mu.Unlock()
}

// nodeHook is added to every node client (ClusterClient.OnNewNode): it sees each dial, each
// command sent to that node (CLUSTER SLOTS included) and each pipeline (the ASKING + command pair
// after an ASK redirection).
type nodeHook struct{ c *Counts }

func (h nodeHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.c.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (h nodeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isClusterSlots(cmd) {
			h.c.clusterSlotsCalls.Add(1)
			return next(ctx, cmd)
		}
		t0 := time.Now()
		err := next(ctx, cmd)
		if h.c.reply(cmd, err) {
			h.c.exchange(time.Since(t0))
		}
		return err
	}
}

func (h nodeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		t0 := time.Now()
		err := next(ctx, cmds)
		exchanged := false
		for _, cmd := range cmds {
			if cmd.Name() == "asking" {
				continue
			}
			if isClusterSlots(cmd) {
				h.c.clusterSlotsCalls.Add(1)
				continue
			}
			if h.c.reply(cmd, cmd.Err()) {
				exchanged = true
			}
		}
		if exchanged {
			h.c.exchange(time.Since(t0))
		}
		return err
	}
}

// wrapLoadState wraps the ClusterClient's topology load (clusterStateHolder.load, the
// loadState method value set in NewClusterClient) with a wrapper that counts the calls and the
// ones that returned a state, and calls the original unchanged. go-redis has no hook for it; the
// field is unexported, so it is reached through reflect (fails loudly if the layout differs).
func wrapLoadState(rdb *redis.ClusterClient, c *Counts) error {
	state := reflect.ValueOf(rdb).Elem().FieldByName("state")
	if !state.IsValid() || state.Kind() != reflect.Pointer || state.IsNil() {
		return fmt.Errorf("ClusterClient has no state holder")
	}
	load := state.Elem().FieldByName("load")
	if !load.IsValid() || load.Kind() != reflect.Func || load.Type().NumOut() != 2 {
		return fmt.Errorf("clusterStateHolder has no load func")
	}
	load = reflect.NewAt(load.Type(), unsafe.Pointer(load.UnsafeAddr())).Elem()
	original := reflect.ValueOf(load.Interface())
	load.Set(reflect.MakeFunc(load.Type(), func(args []reflect.Value) []reflect.Value {
		c.initializations.Add(1)
		out := original.Call(args)
		if out[1].IsNil() {
			c.initializationsOK.Add(1)
		}
		return out
	}))
	return nil
}

// errorClass names an error the application caught: the library's exported sentinel by name,
// else the error's Go type as the library returned it (e.g. *net.OpError, proto.RedisError).
func errorClass(err error) string {
	switch {
	case errors.Is(err, redis.ErrClosed):
		return "redis.ErrClosed"
	case err.Error() == "redis: connection pool timeout":
		return "pool.ErrPoolTimeout"
	case err.Error() == "redis: cluster has no nodes":
		return "redis.errClusterNoNodes"
	case errors.Is(err, os.ErrDeadlineExceeded) && !isOpError(err):
		// A read or write past its deadline (the socket timeout): *poll.DeadlineExceededError.
		return "os.ErrDeadlineExceeded"
	case errors.Is(err, context.Canceled):
		return "context.Canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context.DeadlineExceeded"
	case err == io.EOF:
		return "io.EOF"
	case err == io.ErrUnexpectedEOF:
		return "io.ErrUnexpectedEOF"
	}
	return fmt.Sprintf("%T", err)
}

func isOpError(err error) bool {
	var operr *net.OpError
	return errors.As(err, &operr)
}

// errorKind details an error beyond its class: a Redis error reply's first word (MOVED,
// CLUSTERDOWN, ...), a *net.OpError's operation and whether it timed out (read timeout, dial
// refused, ...). The `error_kinds` output, keyed "class kind".
func errorKind(err error) string {
	class := errorClass(err)
	var rerr redis.Error
	var operr *net.OpError
	switch {
	case errors.As(err, &rerr):
		word, _, _ := strings.Cut(rerr.Error(), " ")
		return class + " " + word
	case errors.As(err, &operr):
		what := "error"
		if operr.Timeout() {
			what = "timeout"
		} else if errors.Is(operr, syscall.ECONNREFUSED) {
			what = "refused"
		} else if errors.Is(operr, syscall.ECONNRESET) {
			what = "reset"
		} else if errors.Is(operr, syscall.EPIPE) {
			what = "broken pipe"
		}
		return class + " " + operr.Op + " " + what
	}
	return class
}

// libraryVersion is the go-redis release linked in (the module's version in the build info),
// checked against the library's own redis.Version().
func libraryVersion() string {
	v := redis.Version()
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == modulePath && strings.TrimPrefix(dep.Version, "v") != v {
				logf("build info says %s %s, redis.Version() says %s", modulePath, dep.Version, v)
			}
		}
	}
	return v
}

// ownedByContract are ClusterOptions that the contract's settings set; library_options may not.
var ownedByContract = map[string]bool{"addrs": true, "clientname": true, "dialtimeout": true,
	"readtimeout": true, "writetimeout": true, "dialer": true, "onconnect": true,
	"newclient": true, "clusterslots": true, "tlsconfig": true}

// applyLibraryOptions sets ClusterOptions fields by name (case-insensitive); durations may be
// given as strings ("250ms") or as integer nanoseconds.
func applyLibraryOptions(opt *redis.ClusterOptions, lib map[string]any) error {
	v := reflect.ValueOf(opt).Elem()
	for name, value := range lib {
		if ownedByContract[strings.ToLower(name)] {
			return fmt.Errorf("library_options: %s is set by the settings", name)
		}
		f := v.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, name) })
		if !f.IsValid() || !f.CanSet() || f.Kind() == reflect.Func {
			return fmt.Errorf("library_options: ClusterOptions has no settable field %s", name)
		}
		if f.Type() == reflect.TypeOf(time.Duration(0)) {
			if s, ok := value.(string); ok {
				d, err := time.ParseDuration(s)
				if err != nil {
					return fmt.Errorf("library_options: %s: %w", name, err)
				}
				f.SetInt(int64(d))
				continue
			}
		}
		raw, _ := json.Marshal(value)
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return fmt.Errorf("library_options: %s: %w", name, err)
		}
	}
	return nil
}

func main() {
	s, err := settingsFrom(os.Args)
	if err != nil {
		logf("%v", err)
		os.Exit(2)
	}
	counts := newCounts()
	out := newOutcomes()

	opt := &redis.ClusterOptions{}
	if err := applyLibraryOptions(opt, s.LibraryOptions); err != nil {
		logf("%v", err)
		os.Exit(2)
	}
	opt.Addrs = []string{s.Startup}
	opt.ClientName = s.ClientName // HELLO ... SETNAME and CLIENT SETNAME on every connection
	opt.DialTimeout = seconds(s.ConnectTimeoutS)
	opt.ReadTimeout = seconds(s.SocketTimeoutS)
	opt.WriteTimeout = seconds(s.SocketTimeoutS)
	opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		counts.newConnections.Add(1)
		return nil
	}
	if s.AddressRemap != nil {
		// go-redis has no address translation: a Dialer (the library's default net.Dialer,
		// options.go NewDialer) that dials the mapped address whatever address it is given.
		to := *s.AddressRemap
		dialer := &net.Dialer{Timeout: opt.DialTimeout, KeepAlive: 5 * time.Minute}
		opt.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, to)
		}
	}
	rdb := redis.NewClusterClient(opt)
	rdb.OnNewNode(func(node *redis.Client) { node.AddHook(nodeHook{counts}) })
	if err := wrapLoadState(rdb, counts); err != nil {
		logf("cannot count topology loads: %v", err)
		os.Exit(2)
	}

	stop := make(chan struct{})
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; close(stop) }()

	ctx, cancel := context.WithCancel(context.Background())
	do := func(i int64, key string) error {
		var err error
		switch s.Command {
		case "zadd":
			err = rdb.ZAdd(ctx, key, redis.Z{Score: float64(i), Member: fmt.Sprintf("m:%d", i%97)}).Err()
		case "set":
			err = rdb.Set(ctx, key, i, 0).Err()
		case "get":
			err = rdb.Get(ctx, key).Err()
		default:
			err = rdb.Incr(ctx, key).Err()
		}
		if err == redis.Nil {
			return nil // GET of a key not set: a reply
		}
		return err
	}
	// Drain: go-redis tries a command up to MaxRedirects+1 times, each bounded by a connect and a
	// socket timeout (and a retry backoff of at most MaxRetryBackoff).
	per := opt.DialTimeout + opt.ReadTimeout + opt.MaxRetryBackoff
	drain := min(time.Duration(opt.MaxRedirects+1)*per+5*time.Second, 60*time.Second)
	classes := func(err error) (string, string) { return errorClass(err), errorKind(err) }
	issuingEnded := run(s, out, stop, drain, cancel, do, classes)
	// Commands still running after the drain was given up have been counted; wait briefly
	// for them to see the cancellation, without counting them again.
	time.Sleep(50 * time.Millisecond)

	out.mu.Lock()
	counts.mu.Lock()
	wedgedSince := out.wedgedSince(issuingEnded, 1000)
	failed := int64(0)
	for _, n := range out.errors {
		failed += n
	}
	summary := map[string]any{
		"client":                "go-redis",
		"version":               libraryVersion(),
		"settings":              s,
		"issued":                out.issued,
		"succeeded":             out.succeeded,
		"failed":                failed,
		"skipped":               out.skipped,
		"errors":                out.errors,
		"error_kinds":           out.errorKinds,
		"first_error":           out.firstError,
		"first_error_ms":        out.firstErrorMS,
		"first_error_issued_ms": out.firstErrorIssuedMS,
		"outcomes":              out.buckets(),
		"moved":                 counts.moved,
		"ask":                   counts.ask,
		"error_replies":         counts.errorReplies,
		"calls":                 counts.calls,
		"initializations":       counts.initializations.Load(),
		"initializations_ok":    counts.initializationsOK.Load(),
		"cluster_slots_calls":   counts.clusterSlotsCalls.Load(),
		"new_connections":       counts.newConnections.Load(),
		"dials":                 counts.dials.Load(),
		"wedged":                wedgedSince != nil,
		"wedged_since_ms":       wedgedSince,
		"startup_nodes_end":     nil,
		"latency_p50_ms":        quantileMS(out.latencies, 0.5),
		"latency_p90_ms":        quantileMS(out.latencies, 0.9),
		"exchange_p50_ms":       quantileMS(counts.exchanges, 0.5),
		"model_options":         map[string]string{"PoolSize": fmt.Sprint(rdb.Options().PoolSize)},
		"started_ms":            out.startedMS,
		"issuing_ended_ms":      issuingEnded,
		"ended_ms":              nowMS(),
	}
	line, err := json.Marshal(summary)
	counts.mu.Unlock()
	out.mu.Unlock()
	if err != nil {
		logf("summary: %v", err)
		os.Exit(1)
	}
	closed := make(chan error, 1)
	go func() { closed <- rdb.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			logf("close: %v", err)
		}
	case <-time.After(2 * time.Second):
		logf("close: still closing after 2 s")
	}
	fmt.Println(string(line))
}

package slotscope.apps;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The fidelity matrix's application contract (docs/FIDELITY.md, "The application contract") for
 * the Java client libraries, shared by {@link JedisApp} and {@link LettuceApp}; the reference is
 * tests/scenarios/app.py (redis-py).
 *
 * <p>Usage: {@code java -jar slotscope-apps.jar jedis|lettuce '<settings JSON>'}. One JSON line on
 * stdout at the end; everything else on stderr.
 *
 * <p>Pacing: command i is due at start + i / rate (by index, no drift). Before issuing, the pacer
 * takes one of {@code in_flight} permits (a semaphore), given back when the command ends. When it
 * had to wait for a permit, every command whose due time passed meanwhile is skipped and counted
 * ({@code skipped}), so a stall is not followed by a burst. Every command's exception is caught and
 * counted by the library's class name. When the schedule ends (or SIGTERM / SIGINT arrives), the
 * commands in flight get {@code 2 x socket_timeout_s + 5 s} to finish; any left are cancelled and
 * counted as failed ({@code CancellationException}).
 */
public final class Main {

  static final int BUCKET_MS = 250;
  static final long WEDGE_MIN_MS = 1000;
  /** How long the library's last events get to land after the drain, milliseconds. */
  static final long SETTLE_MS = 200;
  static final Set<String> COMMANDS = Set.of("zadd", "set", "get", "incr");
  static final ObjectMapper JSON = new ObjectMapper()
      .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

  private Main() {}

  static void log(String message) {
    System.err.println("app: " + message);
    System.err.flush();
  }

  static long nowMs() {
    return System.currentTimeMillis();
  }

  /** The settings as understood (the contract's fields, and `library_options`). */
  static final class Settings {
    final String startup;
    final double rate;
    final int inFlight;
    final double durationS;
    final int keys;
    final String keyPrefix;
    final String command;
    final String addressRemap;
    final double socketTimeoutS;
    final double connectTimeoutS;
    final String clientName;
    final long seed;
    final ObjectNode libraryOptions;

    Settings(JsonNode s) {
      if (!s.isObject() || !s.hasNonNull("startup")) {
        throw new IllegalArgumentException("settings must be a JSON object with \"startup\"");
      }
      startup = s.get("startup").asText();
      rate = s.path("rate").asDouble(200);
      inFlight = s.path("in_flight").asInt(1);
      durationS = s.path("duration_s").asDouble(10);
      keys = s.path("keys").asInt(1000);
      keyPrefix = s.hasNonNull("key_prefix") ? s.get("key_prefix").asText() : "key";
      command = s.hasNonNull("command") ? s.get("command").asText().toLowerCase() : "zadd";
      addressRemap = s.hasNonNull("address_remap") ? s.get("address_remap").asText() : null;
      socketTimeoutS = s.path("socket_timeout_s").asDouble(0.5);
      connectTimeoutS = s.path("connect_timeout_s").asDouble(0.5);
      clientName = s.hasNonNull("client_name") ? s.get("client_name").asText() : "matrix";
      seed = s.path("seed").asLong(1);
      JsonNode lo = s.path("library_options");
      libraryOptions = lo.isObject() ? (ObjectNode) lo : JSON.createObjectNode();
      if (!(rate > 0 && rate <= 100_000) || !(durationS > 0 && durationS <= 600)) {
        throw new IllegalArgumentException("rate must be in (0, 100000], duration_s in (0, 600]");
      }
      if (inFlight < 1 || inFlight > 10_000 || keys < 1) {
        throw new IllegalArgumentException("in_flight must be in [1, 10000], keys >= 1");
      }
      if (!COMMANDS.contains(command)) {
        throw new IllegalArgumentException("command must be one of " + COMMANDS);
      }
      if (!(socketTimeoutS > 0) || !(connectTimeoutS > 0)) {
        throw new IllegalArgumentException("socket_timeout_s and connect_timeout_s must be > 0");
      }
      parseAddr(startup);
      if (addressRemap != null) {
        parseAddr(addressRemap);
      }
    }

    int socketTimeoutMs() {
      return (int) Math.round(socketTimeoutS * 1000);
    }

    int connectTimeoutMs() {
      return (int) Math.round(connectTimeoutS * 1000);
    }

    Map<String, Object> echo() {
      Map<String, Object> m = new TreeMap<>();
      m.put("startup", startup);
      m.put("rate", rate);
      m.put("in_flight", inFlight);
      m.put("duration_s", durationS);
      m.put("keys", keys);
      m.put("key_prefix", keyPrefix);
      m.put("command", command);
      m.put("address_remap", addressRemap);
      m.put("socket_timeout_s", socketTimeoutS);
      m.put("connect_timeout_s", connectTimeoutS);
      m.put("client_name", clientName);
      m.put("seed", seed);
      m.put("library_options", libraryOptions);
      return m;
    }

    /** `library_options` fields the library does not know are an error, not silently ignored. */
    void onlyOptions(Set<String> known) {
      libraryOptions.fieldNames().forEachRemaining(name -> {
        if (!known.contains(name)) {
          throw new IllegalArgumentException(
              "unknown library_options field " + name + " (known: " + new java.util.TreeSet<>(known)
                  + ")");
        }
      });
    }
  }

  /** "host:port" as {host, port}. */
  static String[] parseAddr(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("not host:port: " + text);
    }
    String port = text.substring(colon + 1);
    if (!port.chars().allMatch(Character::isDigit)) {
      throw new IllegalArgumentException("not host:port: " + text);
    }
    return new String[] {text.substring(0, colon), port};
  }

  /** What the library did, counted by its own hooks (each driver says which). */
  static final class Counts {
    final AtomicLong initializations = new AtomicLong();
    final AtomicLong initializationsOk = new AtomicLong();
    final AtomicLong clusterSlotsCalls = new AtomicLong();
    final AtomicLong newConnections = new AtomicLong();
    final Map<String, LongAdder> calls = new ConcurrentHashMap<>();
    final Map<String, LongAdder> moved = new ConcurrentHashMap<>();
    final Map<String, LongAdder> ask = new ConcurrentHashMap<>();
    final Map<String, LongAdder> errorReplies = new ConcurrentHashMap<>();
    /** Milliseconds of every exchange with one node that got a reply. */
    final List<Double> exchanges = Collections.synchronizedList(new ArrayList<>());

    static void add(Map<String, LongAdder> m, String command) {
      m.computeIfAbsent(command, k -> new LongAdder()).increment();
    }

    static Map<String, Long> plain(Map<String, LongAdder> m) {
      Map<String, Long> out = new TreeMap<>();
      m.forEach((k, v) -> out.put(k, v.sum()));
      return out;
    }

    void into(Map<String, Object> out) {
      out.put("initializations", initializations.get());
      out.put("initializations_ok", initializationsOk.get());
      out.put("cluster_slots_calls", clusterSlotsCalls.get());
      out.put("new_connections", newConnections.get());
      out.put("calls", plain(calls));
      out.put("moved", plain(moved));
      out.put("ask", plain(ask));
      out.put("error_replies", plain(errorReplies));
      List<Double> copy;
      synchronized (exchanges) {
        copy = new ArrayList<>(exchanges);
      }
      out.put("exchange_p50_ms", quantileMs(copy, 0.5));
    }
  }

  /** One client library behind the contract. */
  interface Driver {
    /** The library's name in the output ("jedis", "lettuce"). */
    String client();

    /** The release actually loaded, read from the library at run time. */
    String version();

    /**
     * Makes the client and its first topology load before the schedule starts, so that the JVM's
     * class loading is not in the first commands' time (on failure the first command tries again).
     */
    void warmUp();

    /** Starts `command` on `key` (the i-th scheduled); the future ends with the library's result. */
    CompletableFuture<?> issue(long i, String key);

    /** The library's counts, and its own fields (startup_nodes_end, extra figures). */
    void report(Map<String, Object> out);

    /** Closes the client (bounded by the caller). */
    void close() throws Exception;
  }

  /** The q-quantile of `ms` (milliseconds, 3 decimals), null when empty. */
  static Double quantileMs(List<Double> ms, double q) {
    if (ms.isEmpty()) {
      return null;
    }
    List<Double> v = new ArrayList<>(ms);
    Collections.sort(v);
    double x = v.get(Math.min(v.size() - 1, (int) (q * v.size())));
    return Math.round(x * 1000) / 1000.0;
  }

  /** The exception the application saw: CompletableFuture's wrappers taken off. */
  static Throwable unwrap(Throwable e) {
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  /** What the application saw. */
  static final class Outcomes {
    long issued;
    long succeeded;
    long skipped;
    final Map<String, Long> errors = new TreeMap<>();
    final Map<String, String> firstError = new TreeMap<>();
    Long firstErrorMs;
    Long firstErrorIssuedMs;
    boolean firstErrorHung;
    long startedMs;
    final Map<Long, Long> okBuckets = new TreeMap<>();
    final Map<Long, Long> failedBuckets = new TreeMap<>();
    final Map<Long, Long> failedIssued = new TreeMap<>();
    Long lastOkMs;
    Long firstFailSinceOkMs;
    final List<Double> latencies = new ArrayList<>();

    long bucket(long tMs) {
      return Math.max(0, tMs - startedMs) / BUCKET_MS;
    }

    synchronized void ok(double latencyMs) {
      succeeded++;
      latencies.add(latencyMs);
      lastOkMs = nowMs();
      okBuckets.merge(bucket(lastOkMs), 1L, Long::sum);
      firstFailSinceOkMs = null;
    }

    synchronized void failed(Throwable e, long issuedMs, boolean hung) {
      String cls = e.getClass().getSimpleName();
      if (!errors.containsKey(cls)) {
        log("first " + cls + ": " + e.getMessage());
      }
      errors.merge(cls, 1L, Long::sum);
      String message = String.valueOf(e.getMessage());
      firstError.putIfAbsent(cls, message.length() > 300 ? message.substring(0, 300) : message);
      long t = nowMs();
      long b = bucket(t);
      failedBuckets.merge(b, 1L, Long::sum);
      failedIssued.merge(b, issuedMs, Math::min);
      if (firstErrorMs == null) {
        firstErrorMs = t;
        firstErrorIssuedMs = issuedMs;
        firstErrorHung = hung;
      } else if (hung && firstErrorHung) {
        // Commands that hung until the drain cancelled them end at once, in no order: the first
        // error is the cancellation, issued when the first of them was.
        firstErrorIssuedMs = Math.min(firstErrorIssuedMs, issuedMs);
      }
      // A command the drain gave up on failed from when it was issued, or just after the
      // last success if that came later: the replay counts it there, and a client whose
      // commands all hang is wedged.
      long since = hung ? Math.max(issuedMs, lastOkMs == null ? issuedMs : lastOkMs + 1) : t;
      if (firstFailSinceOkMs == null || since < firstFailSinceOkMs) {
        firstFailSinceOkMs = since;
      }
    }

    synchronized Map<String, Object> buckets() {
      long last = -1;
      for (long b : okBuckets.keySet()) {
        last = Math.max(last, b);
      }
      for (long b : failedBuckets.keySet()) {
        last = Math.max(last, b);
      }
      List<Long> ok = new ArrayList<>();
      List<Long> failed = new ArrayList<>();
      List<Long> issued = new ArrayList<>();
      for (long b = 0; b <= last; b++) {
        ok.add(okBuckets.getOrDefault(b, 0L));
        failed.add(failedBuckets.getOrDefault(b, 0L));
        issued.add(failedIssued.get(b));
      }
      Map<String, Object> m = new TreeMap<>();
      m.put("bucket_ms", BUCKET_MS);
      m.put("ok", ok);
      m.put("failed", failed);
      m.put("failed_issued", issued);
      return m;
    }

    long failedTotal() {
      return errors.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /** One issued command, ended exactly once (by the library or by the drain's cancellation). */
  static final class Pending {
    final long issuedNanos = System.nanoTime();
    final long issuedMs = nowMs();
    final AtomicBoolean ended = new AtomicBoolean();
    volatile CompletableFuture<?> future;
  }

  public static void main(String[] args) {
    if (args.length != 2) {
      System.err.println("usage: java -jar slotscope-apps.jar jedis|lettuce '<settings JSON>'");
      System.exit(2);
    }
    Settings s;
    Driver d;
    try {
      s = new Settings(JSON.readTree(args[1]));
      switch (args[0]) {
        case "jedis":
          d = new JedisApp(s);
          break;
        case "lettuce":
          d = new LettuceApp(s);
          break;
        default:
          throw new IllegalArgumentException("library must be jedis or lettuce, not " + args[0]);
      }
    } catch (Exception e) {
      System.err.println("app: " + e.getMessage());
      System.exit(2);
      return;
    }
    run(s, d);
    System.out.flush();
    // The libraries' threads (pools, event loops) must not keep the process alive.
    Runtime.getRuntime().halt(0);
  }

  static void run(Settings s, Driver d) {
    CountDownLatch stop = new CountDownLatch(1);
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> stop.countDown());
    }
    try {
      d.warmUp();
    } catch (RuntimeException e) {
      log("warm-up: " + e.getClass().getSimpleName() + ": " + e.getMessage()
          + " (the first command tries again)");
    }
    Outcomes out = new Outcomes();
    Random rng = new Random(s.seed);
    Semaphore permits = new Semaphore(s.inFlight);
    Set<Pending> pending = ConcurrentHashMap.newKeySet();
    double periodNs = 1e9 / s.rate;
    long scheduled = (long) Math.ceil(s.durationS * s.rate);
    long startedMs = nowMs();
    out.startedMs = startedMs;
    long start = System.nanoTime();
    log("schedule started: " + scheduled + " commands at " + s.rate + "/s");
    long i = 0;
    try {
      while (stop.getCount() > 0 && i < scheduled) {
        long delay = start + Math.round(i * periodNs) - System.nanoTime();
        if (delay > 0 && stop.await(delay, TimeUnit.NANOSECONDS)) {
          break;
        }
        boolean waited = false;
        if (!permits.tryAcquire()) {
          waited = true;
          boolean got = false;
          while (stop.getCount() > 0 && !got) {
            got = permits.tryAcquire(10, TimeUnit.MILLISECONDS);
          }
          if (!got) {
            // The schedule ended while the pacer waited: the commands whose time passed are
            // skipped, as when a permit comes in time.
            out.skipped += Math.min(lateFrom(i, start, periodNs), scheduled) - i;
            break;
          }
        }
        if (stop.getCount() == 0) {
          permits.release();
          if (waited) {
            out.skipped += Math.min(lateFrom(i, start, periodNs), scheduled) - i;
          }
          break;
        }
        if (waited) {
          long late = lateFrom(i, start, periodNs);
          out.skipped += Math.min(late, scheduled) - i;
          if (late >= scheduled) {
            permits.release();
            break;
          }
          i = late;
          delay = start + Math.round(i * periodNs) - System.nanoTime();
          if (delay > 0) {
            TimeUnit.NANOSECONDS.sleep(delay);
          }
        }
        String key = s.keyPrefix + ":{" + rng.nextInt(s.keys) + "}";
        out.issued++;
        Pending p = new Pending();
        pending.add(p);
        CompletableFuture<?> f;
        try {
          f = d.issue(i, key);
        } catch (Throwable e) {
          f = CompletableFuture.failedFuture(e);
        }
        p.future = f;
        f.whenComplete((v, e) -> {
          if (!p.ended.compareAndSet(false, true)) {
            return;
          }
          if (e == null) {
            out.ok((System.nanoTime() - p.issuedNanos) / 1e6);
          } else {
            out.failed(unwrap(e), p.issuedMs, false);
          }
          pending.remove(p);
          permits.release();
        });
        i++;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long issuingEndedMs = nowMs();
    long drainMs = Math.round((2 * s.socketTimeoutS + 5) * 1000);
    long drainEnd = System.nanoTime() + drainMs * 1_000_000L;
    while (!pending.isEmpty() && System.nanoTime() < drainEnd) {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        break;
      }
    }
    int cancelled = 0;
    for (Pending p : pending) {
      if (p.ended.compareAndSet(false, true)) {
        // Still in flight when the drain ran out: failed, with when it was issued.
        cancelled++;
        CompletableFuture<?> f = p.future;
        if (f != null) {
          f.cancel(true);
        }
        out.failed(new java.util.concurrent.CancellationException(
            "still in flight " + drainMs + " ms after the schedule ended"), p.issuedMs, true);
      }
    }
    if (cancelled > 0) {
      log(cancelled + " commands still in flight after " + drainMs + " ms: cancelled");
    }
    // The library's own events of the last exchanges (Lettuce's CommandListener and event bus,
    // Jedis's wrappers) can land after the futures they belong to completed: let them, so the
    // counts agree with the outcomes (once, live, 3 020 success replies counted for 3 021
    // successes at 821/s: SLOTSCOPE_SEED=1796458544).
    try {
      Thread.sleep(SETTLE_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }

    Map<String, Object> summary = new TreeMap<>();
    synchronized (out) {
      summary.put("client", d.client());
      summary.put("version", d.version());
      summary.put("settings", s.echo());
      summary.put("issued", out.issued);
      summary.put("succeeded", out.succeeded);
      summary.put("failed", out.failedTotal());
      summary.put("skipped", out.skipped);
      summary.put("errors", new TreeMap<>(out.errors));
      summary.put("first_error", new TreeMap<>(out.firstError));
      summary.put("first_error_ms", out.firstErrorMs);
      summary.put("first_error_issued_ms", out.firstErrorIssuedMs);
      summary.put("outcomes", out.buckets());
      summary.put("latency_p50_ms", quantileMs(out.latencies, 0.5));
      summary.put("latency_p90_ms", quantileMs(out.latencies, 0.9));
      // Wedged: every command that ended since a moment failed (no success after it), and that
      // moment is at least WEDGE_MIN_MS before the schedule ended. Neither Java library ever
      // drops its seed nodes, so the contract's "no startup node left" cannot happen (README).
      Long since = out.firstFailSinceOkMs;
      boolean wedged = since != null && since <= issuingEndedMs - WEDGE_MIN_MS;
      summary.put("wedged", wedged);
      summary.put("wedged_since_ms", wedged ? since : null);
    }
    d.report(summary);
    summary.put("started_ms", startedMs);
    summary.put("issuing_ended_ms", issuingEndedMs);
    summary.put("ended_ms", nowMs());
    Thread closer = new Thread(() -> {
      try {
        d.close();
      } catch (Exception e) {
        log("close: " + e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }, "close");
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      System.out.println(JSON.writeValueAsString(summary));
    } catch (Exception e) {
      log("summary: " + e);
    }
  }

  /**
   * The first command from {@code i} whose due time has not passed yet: those before it came due
   * while the pacer waited for a permit, and are skipped (no burst), whether the wait ended with a
   * permit or with the schedule.
   */
  static long lateFrom(long i, long start, double periodNs) {
    return Math.max(i, (long) Math.ceil((System.nanoTime() - start) / periodNs));
  }
}

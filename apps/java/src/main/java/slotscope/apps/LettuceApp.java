package slotscope.apps;

import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.LettuceVersion;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.event.AskRedirectionEvent;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.event.MovedRedirectionEvent;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.event.Event;
import io.lettuce.core.event.command.CommandFailedEvent;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.event.command.CommandSucceededEvent;
import io.lettuce.core.event.connection.ConnectedEvent;
import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.DnsResolvers;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import reactor.core.Disposable;

/**
 * The contract's application on Lettuce 6.3.2.RELEASE ({@link RedisClusterClient}, async API),
 * counted by Lettuce's own hooks (README.md names each with its file and line):
 *
 * <ul>
 *   <li>{@link CountingClient}: RedisClusterClient with {@code loadPartitionsAsync()} (every
 *       topology load, the first one and every refresh) wrapped: initialisations started and
 *       succeeded;
 *   <li>a {@link CommandListener} (one exchange with one node per started/succeeded/failed
 *       event): {@code CLUSTER NODES} sent, replies to the application's command, error replies,
 *       MOVED/ASK replies that ended a command (redirections exhausted), exchange time;
 *   <li>the event bus: {@link MovedRedirectionEvent} and {@link AskRedirectionEvent} (each
 *       redirection followed), {@link ConnectedEvent} (connections opened),
 *       {@link ClusterTopologyChangedEvent};
 *   <li>{@link MappingSocketAddressResolver}: {@code address_remap}.
 * </ul>
 */
final class LettuceApp implements Main.Driver {

  private static final Set<String> OPTIONS = Set.of("maxRedirects", "adaptiveRefresh",
      "adaptiveRefreshTimeoutMs", "periodicRefreshMs", "dynamicRefreshSources",
      "closeStaleConnections", "validateClusterNodeMembership", "autoReconnect",
      "refreshTriggersReconnectAttempts");

  private final Main.Settings s;
  private final Main.Counts counts = new Main.Counts();
  private final AtomicLong topologyChanges = new AtomicLong();
  private final ClientResources resources;
  private final CountingClient client;
  private final Disposable subscription;
  private final ExecutorService connector;
  private final Object connectLock = new Object();
  private CompletableFuture<StatefulRedisClusterConnection<String, String>> connection;

  LettuceApp(Main.Settings s) {
    this.s = s;
    s.onlyOptions(OPTIONS);
    Map<String, Object> o = Main.JSON.convertValue(s.libraryOptions,
        Main.JSON.getTypeFactory().constructMapType(Map.class, String.class, Object.class));
    DefaultClientResources.Builder rb = DefaultClientResources.builder();
    if (s.addressRemap != null) {
      String[] hp = Main.parseAddr(s.addressRemap);
      HostAndPort to = HostAndPort.of(hp[0], Integer.parseInt(hp[1]));
      rb.socketAddressResolver(MappingSocketAddressResolver.create(DnsResolvers.JVM_DEFAULT,
          met -> to));
    }
    resources = rb.build();
    subscription = resources.eventBus().get().subscribe(this::onEvent);

    String[] hp = Main.parseAddr(s.startup);
    RedisURI uri = RedisURI.builder()
        .withHost(hp[0])
        .withPort(Integer.parseInt(hp[1]))
        .withClientName(s.clientName)
        .withTimeout(Duration.ofMillis(s.socketTimeoutMs()))
        .build();
    client = new CountingClient(resources, List.of(uri));

    ClusterTopologyRefreshOptions.Builder refresh = ClusterTopologyRefreshOptions.builder();
    if (Boolean.TRUE.equals(o.get("adaptiveRefresh"))) {
      refresh.enableAllAdaptiveRefreshTriggers();
    }
    if (o.get("adaptiveRefreshTimeoutMs") instanceof Number) {
      refresh.adaptiveRefreshTriggersTimeout(
          Duration.ofMillis(((Number) o.get("adaptiveRefreshTimeoutMs")).longValue()));
    }
    if (o.get("periodicRefreshMs") instanceof Number) {
      refresh.enablePeriodicRefresh(
          Duration.ofMillis(((Number) o.get("periodicRefreshMs")).longValue()));
    }
    if (o.get("dynamicRefreshSources") instanceof Boolean) {
      refresh.dynamicRefreshSources((Boolean) o.get("dynamicRefreshSources"));
    }
    if (o.get("closeStaleConnections") instanceof Boolean) {
      refresh.closeStaleConnections((Boolean) o.get("closeStaleConnections"));
    }
    if (o.get("refreshTriggersReconnectAttempts") instanceof Number) {
      refresh.refreshTriggersReconnectAttempts(
          ((Number) o.get("refreshTriggersReconnectAttempts")).intValue());
    }
    ClusterClientOptions.Builder options = ClusterClientOptions.builder()
        .socketOptions(SocketOptions.builder()
            .connectTimeout(Duration.ofMillis(s.connectTimeoutMs())).build())
        // Async commands time out after the socket timeout (Lettuce's default never times out).
        .timeoutOptions(TimeoutOptions.enabled(Duration.ofMillis(s.socketTimeoutMs())))
        .topologyRefreshOptions(refresh.build());
    if (o.get("maxRedirects") instanceof Number) {
      options.maxRedirects(((Number) o.get("maxRedirects")).intValue());
    }
    if (o.get("validateClusterNodeMembership") instanceof Boolean) {
      options.validateClusterNodeMembership((Boolean) o.get("validateClusterNodeMembership"));
    }
    if (o.get("autoReconnect") instanceof Boolean) {
      options.autoReconnect((Boolean) o.get("autoReconnect"));
    }
    client.setOptions(options.build());
    client.addListener(new Listener());
    connector = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "lettuce-connect");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public String client() {
    return "lettuce";
  }

  @Override
  public String version() {
    String v = LettuceVersion.getVersion();
    if (v != null) {
      return v;
    }
    // In the fat jar the package's manifest is ours: the pom.properties lettuce-core packs.
    Properties p = new Properties();
    try (InputStream in = RedisClusterClient.class.getClassLoader()
        .getResourceAsStream("META-INF/maven/io.lettuce/lettuce-core/pom.properties")) {
      p.load(in);
    } catch (Exception e) {
      return "?";
    }
    return p.getProperty("version", "?");
  }

  @Override
  public void warmUp() {
    try {
      connection().get(30, TimeUnit.SECONDS).async();
    } catch (Exception e) {
      throw new IllegalStateException(Main.unwrap(e).toString(), e);
    }
  }

  /**
   * The cluster connection, made on first use (as redis-py's client initialises on its first
   * command); a connect that failed is tried again by the next command.
   */
  private CompletableFuture<StatefulRedisClusterConnection<String, String>> connection() {
    synchronized (connectLock) {
      if (connection == null || connection.isCompletedExceptionally()) {
        // connect() loads the topology first (connectAsync requires it loaded).
        connection = CompletableFuture.supplyAsync(() -> client.connect(StringCodec.UTF8),
            connector);
      }
      return connection;
    }
  }

  @Override
  public CompletableFuture<?> issue(long i, String key) {
    return connection().thenCompose(c -> {
      RedisAdvancedClusterAsyncCommands<String, String> a = c.async();
      CompletableFuture<?> f;
      switch (s.command) {
        case "zadd":
          f = a.zadd(key, (double) i, "m:" + (i % 97)).toCompletableFuture();
          break;
        case "set":
          f = a.set(key, Long.toString(i)).toCompletableFuture();
          break;
        case "get":
          f = a.get(key).toCompletableFuture();
          break;
        default:
          f = a.incr(key).toCompletableFuture();
          break;
      }
      return f.thenApply(reply -> (Object) reply);
    });
  }

  private void onEvent(Event e) {
    if (e instanceof MovedRedirectionEvent) {
      Main.Counts.add(counts.moved, s.command);
    } else if (e instanceof AskRedirectionEvent) {
      Main.Counts.add(counts.ask, s.command);
    } else if (e instanceof ConnectedEvent) {
      counts.newConnections.incrementAndGet();
    } else if (e instanceof ClusterTopologyChangedEvent) {
      topologyChanges.incrementAndGet();
    }
  }

  @Override
  public void report(Map<String, Object> out) {
    // The event bus delivers on Lettuce's scheduler (DefaultEventBus.get's publishOn): let the
    // last events arrive.
    try {
      Thread.sleep(300);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    counts.into(out);
    out.put("topology_changes", topologyChanges.get());
    // Lettuce keeps its initial URIs for ever (RedisClusterClient.initialUris, final): null.
    out.put("startup_nodes_end", null);
    Integer known = null;
    synchronized (connectLock) {
      if (connection != null && connection.isDone() && !connection.isCompletedExceptionally()) {
        Partitions p = client.getPartitions();
        known = p.size();
      }
    }
    out.put("known_nodes_end", known);
  }

  @Override
  public void close() {
    synchronized (connectLock) {
      if (connection != null && connection.isDone() && !connection.isCompletedExceptionally()) {
        connection.join().closeAsync();
      }
    }
    subscription.dispose();
    client.shutdown(0, 500, TimeUnit.MILLISECONDS);
    resources.shutdown(0, 500, TimeUnit.MILLISECONDS);
  }

  /** RedisClusterClient with every topology load counted; the original does the work. */
  private final class CountingClient extends RedisClusterClient {

    CountingClient(ClientResources resources, Iterable<RedisURI> uris) {
      super(resources, uris);
    }

    @Override
    protected CompletableFuture<Partitions> loadPartitionsAsync() {
      counts.initializations.incrementAndGet();
      return super.loadPartitionsAsync().whenComplete((p, e) -> {
        if (e == null) {
          counts.initializationsOk.incrementAndGet();
        }
      });
    }
  }

  /** One event per exchange with one node (CommandListenerWriter wraps every node connection). */
  private final class Listener implements CommandListener {

    private static final String T0 = "slotscope.t0";

    private boolean ours(RedisCommand<?, ?, ?> c) {
      return c.getType().name().equalsIgnoreCase(s.command);
    }

    @Override
    public void commandStarted(CommandStartedEvent e) {
      RedisCommand<?, ?, ?> c = e.getCommand();
      String type = c.getType().name();
      if (type.equals("CLUSTER") && c.getArgs() != null
          && c.getArgs().toCommandString().toUpperCase().startsWith("NODES")) {
        counts.clusterSlotsCalls.incrementAndGet();
      } else if (ours(c)) {
        e.getContext().put(T0, System.nanoTime());
      }
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent e) {
      RedisCommand<?, ?, ?> c = e.getCommand();
      if (!ours(c)) {
        return;
      }
      // A reply: a success, or a MOVED/ASK the cluster writer follows (counted from its events).
      Main.Counts.add(counts.calls, s.command);
      Object t0 = e.getContext().get(T0);
      if (t0 instanceof Long) {
        counts.exchanges.add((System.nanoTime() - (Long) t0) / 1e6);
      }
    }

    @Override
    public void commandFailed(CommandFailedEvent e) {
      RedisCommand<?, ?, ?> c = e.getCommand();
      if (!ours(c) || !(e.getCause() instanceof RedisCommandExecutionException)) {
        // Not our command, or no reply (timeout, connection lost, cancelled).
        return;
      }
      Main.Counts.add(counts.calls, s.command);
      String message = String.valueOf(e.getCause().getMessage());
      if (message.startsWith("MOVED")) {
        // Redirections exhausted: Lettuce completes the command with this MOVED (no event).
        Main.Counts.add(counts.moved, s.command);
      } else if (message.startsWith("ASK")) {
        Main.Counts.add(counts.ask, s.command);
      } else {
        Main.Counts.add(counts.errorReplies, s.command);
      }
    }
  }
}

package slotscope.apps;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLSocketFactory;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.CommandObject;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisMovedDataException;
import redis.clients.jedis.executors.ClusterCommandExecutor;
import redis.clients.jedis.providers.ClusterConnectionProvider;

/**
 * The contract's application on Jedis 5.1.0 ({@link JedisCluster}), counted by Jedis's own hooks
 * (README.md names each with its file and line in the release's source):
 *
 * <ul>
 *   <li>{@link CountingExecutor}: the {@link ClusterCommandExecutor} JedisCluster builds, with its
 *       one-node exchange {@code execute(Connection, CommandObject)} wrapped: calls, MOVED, ASK,
 *       other error replies, exchange time;
 *   <li>{@link CountingProvider}: the {@link ClusterConnectionProvider} JedisCluster builds, with
 *       its slot-cache renewals wrapped: initialisations (started, succeeded);
 *   <li>{@link TapSocketFactory}: the socket factory hook of {@link JedisClientConfig}
 *       ({@code sslSocketFactory}, called with every socket Jedis connected): connections opened,
 *       {@code CLUSTER SLOTS} sent and their array replies, by watching the bytes Jedis itself
 *       writes and reads (no TLS: the factory hands back the plain socket, wrapped);
 *   <li>the {@code HostAndPortMapper} of {@link JedisClientConfig}: {@code address_remap}, and the
 *       connection attempts (a renewal that neither connected nor sent CLUSTER SLOTS did nothing).
 * </ul>
 */
final class JedisApp implements Main.Driver {

  private static final Set<String> OPTIONS = Set.of("maxAttempts", "maxTotalRetriesDurationMs",
      "poolMaxTotal", "poolMaxIdle", "poolMaxWaitMs", "topologyRefreshPeriodMs");

  /**
   * What the current thread did inside Jedis: [0] sockets attempted, [1] CLUSTER SLOTS sent,
   * [2] CLUSTER SLOTS array replies received. Jedis is synchronous: a renewal's sends and reads
   * happen on the thread that asked for it.
   */
  private static final ThreadLocal<long[]> MARKS = ThreadLocal.withInitial(() -> new long[3]);

  private final Main.Settings s;
  private final Main.Counts counts = new Main.Counts();
  private final JedisClientConfig config;
  private final GenericObjectPoolConfig<Connection> poolConfig;
  private final int maxAttempts;
  private final Duration maxTotalRetries;
  private final Duration topologyRefreshPeriod;
  private final ExecutorService workers;
  private final Object startLock = new Object();
  private volatile JedisCluster cluster;

  JedisApp(Main.Settings s) {
    this.s = s;
    s.onlyOptions(OPTIONS);
    Map<String, Object> o = Main.JSON.convertValue(s.libraryOptions,
        Main.JSON.getTypeFactory().constructMapType(Map.class, String.class, Object.class));
    HostAndPort remapTo = null;
    if (s.addressRemap != null) {
      String[] hp = Main.parseAddr(s.addressRemap);
      remapTo = new HostAndPort(hp[0], Integer.parseInt(hp[1]));
    }
    final HostAndPort to = remapTo;
    config = DefaultJedisClientConfig.builder()
        .socketTimeoutMillis(s.socketTimeoutMs())
        .connectionTimeoutMillis(s.connectTimeoutMs())
        .clientName(s.clientName)
        // Called once per socket Jedis creates (DefaultJedisSocketFactory.getSocketHostAndPort):
        // null keeps the address Jedis met.
        .hostAndPortMapper(hap -> {
          MARKS.get()[0]++;
          return to;
        })
        // No TLS: the factory returns the connected plain socket, wrapped to count (see class).
        .ssl(true)
        .sslSocketFactory(new TapSocketFactory())
        .build();
    maxAttempts = intOption(o, "maxAttempts", JedisCluster.DEFAULT_MAX_ATTEMPTS);
    // JedisCluster's own default (JedisCluster.java:178): socket timeout x attempts.
    maxTotalRetries = Duration.ofMillis(intOption(o, "maxTotalRetriesDurationMs",
        s.socketTimeoutMs() * maxAttempts));
    poolConfig = new GenericObjectPoolConfig<>();
    int pool = Math.max(8, s.inFlight);
    poolConfig.setMaxTotal(intOption(o, "poolMaxTotal", pool));
    poolConfig.setMaxIdle(intOption(o, "poolMaxIdle", pool));
    if (o.containsKey("poolMaxWaitMs")) {
      poolConfig.setMaxWait(Duration.ofMillis(intOption(o, "poolMaxWaitMs", -1)));
    }
    topologyRefreshPeriod = o.containsKey("topologyRefreshPeriodMs")
        ? Duration.ofMillis(intOption(o, "topologyRefreshPeriodMs", 0)) : null;
    workers = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "jedis-command");
      t.setDaemon(true);
      return t;
    });
  }

  private static int intOption(Map<String, Object> o, String name, int dflt) {
    Object v = o.get(name);
    return v instanceof Number ? ((Number) v).intValue() : dflt;
  }

  @Override
  public String client() {
    return "jedis";
  }

  @Override
  public String version() {
    // What JedisMetaInfo (package-private) reads: the pom.properties packed in the jedis jar.
    Properties p = new Properties();
    try (InputStream in = JedisCluster.class.getClassLoader()
        .getResourceAsStream("redis/clients/jedis/pom.properties")) {
      p.load(in);
    } catch (Exception e) {
      return "?";
    }
    return p.getProperty("version", "?");
  }

  @Override
  public void warmUp() {
    cluster();
  }

  /** The client, made on first use (as redis-py's initialises on its first command). */
  private JedisCluster cluster() {
    JedisCluster c = cluster;
    if (c != null) {
      return c;
    }
    synchronized (startLock) {
      if (cluster == null) {
        String[] hp = Main.parseAddr(s.startup);
        // The provider's constructor runs its first initialisation (initializeSlotsCache).
        counts.initializations.incrementAndGet();
        CountingProvider provider = new CountingProvider(
            Set.of(new HostAndPort(hp[0], Integer.parseInt(hp[1]))));
        counts.initializationsOk.incrementAndGet();
        JedisCluster jc = new JedisCluster(provider, maxAttempts, maxTotalRetries);
        // JedisCluster made its ClusterCommandExecutor over `provider` (UnifiedJedis.java:172);
        // the same executor, with its one-node exchange counted, takes its place.
        try {
          Field f = UnifiedJedis.class.getDeclaredField("executor");
          f.setAccessible(true);
          f.set(jc, new CountingExecutor(provider, maxAttempts, maxTotalRetries));
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException("cannot install the counting executor", e);
        }
        cluster = jc;
      }
      return cluster;
    }
  }

  @Override
  public CompletableFuture<?> issue(long i, String key) {
    return CompletableFuture.supplyAsync(() -> {
      JedisCluster c = cluster();
      switch (s.command) {
        case "zadd":
          return c.zadd(key, (double) i, "m:" + (i % 97));
        case "set":
          return c.set(key, Long.toString(i));
        case "get":
          return c.get(key);
        default:
          return c.incr(key);
      }
    }, workers);
  }

  @Override
  public void report(Map<String, Object> out) {
    counts.into(out);
    out.put("client", client());
    // Jedis keeps its start nodes for ever (JedisClusterInfoCache.startNodes, final): the count
    // says nothing, so null. What it knows at the end: the node pools of its slot cache.
    out.put("startup_nodes_end", null);
    JedisCluster c = cluster;
    out.put("known_nodes_end", c == null ? null : c.getClusterNodes().size());
  }

  @Override
  public void close() {
    JedisCluster c = cluster;
    if (c != null) {
      c.close();
    }
  }

  /** JedisCluster's provider with its slot-cache renewals counted. */
  private final class CountingProvider extends ClusterConnectionProvider {

    CountingProvider(Set<HostAndPort> nodes) {
      super(nodes, config, poolConfig, topologyRefreshPeriod);
    }

    @Override
    public void renewSlotCache() {
      renewal(() -> CountingProvider.super.renewSlotCache());
    }

    @Override
    public void renewSlotCache(Connection jedis) {
      renewal(() -> CountingProvider.super.renewSlotCache(jedis));
    }

    /**
     * A renewal started when it tried a node (a socket, or CLUSTER SLOTS on the connection it was
     * given); one that did neither found another renewal running and returned
     * (JedisClusterInfoCache.renewClusterSlots's tryLock). It succeeded when a CLUSTER SLOTS
     * array reply reached it.
     */
    private void renewal(Runnable original) {
      long[] m = MARKS.get();
      long attempts = m[0];
      long sent = m[1];
      long replies = m[2];
      try {
        original.run();
      } finally {
        if (m[0] > attempts || m[1] > sent) {
          counts.initializations.incrementAndGet();
          if (m[2] > replies) {
            counts.initializationsOk.incrementAndGet();
          }
        }
      }
    }
  }

  /** JedisCluster's executor with its one-node exchange counted; the original does the work. */
  private final class CountingExecutor extends ClusterCommandExecutor {

    CountingExecutor(ClusterConnectionProvider provider, int maxAttempts, Duration maxTotal) {
      super(provider, maxAttempts, maxTotal);
    }

    @Override
    protected <T> T execute(Connection connection, CommandObject<T> commandObject) {
      String cmd = commandObject.getArguments().getCommand().toString().toLowerCase();
      long t0 = System.nanoTime();
      try {
        T reply = super.execute(connection, commandObject);
        counts.exchanges.add((System.nanoTime() - t0) / 1e6);
        Main.Counts.add(counts.calls, cmd);
        return reply;
      } catch (JedisMovedDataException e) {
        counts.exchanges.add((System.nanoTime() - t0) / 1e6);
        Main.Counts.add(counts.calls, cmd);
        Main.Counts.add(counts.moved, cmd);
        throw e;
      } catch (JedisAskDataException e) {
        counts.exchanges.add((System.nanoTime() - t0) / 1e6);
        Main.Counts.add(counts.calls, cmd);
        Main.Counts.add(counts.ask, cmd);
        throw e;
      } catch (JedisDataException e) {
        // Any other error reply (CLUSTERDOWN, TRYAGAIN, ...) is a reply received.
        Main.Counts.add(counts.calls, cmd);
        Main.Counts.add(counts.errorReplies, cmd);
        throw e;
      }
    }
  }

  /**
   * The socket factory Jedis calls with every socket it connected
   * (DefaultJedisSocketFactory.createSocket); it returns that socket, wrapped to count.
   */
  private final class TapSocketFactory extends SSLSocketFactory {

    @Override
    public Socket createSocket(Socket socket, String host, int port, boolean autoClose) {
      counts.newConnections.incrementAndGet();
      return new TapSocket(socket);
    }

    @Override
    public String[] getDefaultCipherSuites() {
      return new String[0];
    }

    @Override
    public String[] getSupportedCipherSuites() {
      return new String[0];
    }

    @Override
    public Socket createSocket(String host, int port) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Socket createSocket(InetAddress host, int port) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress,
        int localPort) {
      throw new UnsupportedOperationException();
    }
  }

  /** Exactly the bytes Jedis writes for CLUSTER SLOTS (JedisClusterInfoCache.executeClusterSlots). */
  private static final byte[] CLUSTER_SLOTS =
      "*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n".getBytes(StandardCharsets.US_ASCII);

  /** The connected socket Jedis made, with its streams watched. */
  private final class TapSocket extends Socket {
    private final Socket inner;
    private volatile boolean slotsReplyDue;
    private InputStream in;
    private OutputStream out;

    TapSocket(Socket inner) {
      this.inner = inner;
    }

    @Override
    public synchronized InputStream getInputStream() throws IOException {
      if (in == null) {
        in = new FilterInputStream(inner.getInputStream()) {
          @Override
          public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
              seen((byte) b);
            }
            return b;
          }

          @Override
          public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            if (n > 0) {
              seen(buf[off]);
            }
            return n;
          }
        };
      }
      return in;
    }

    /** The first byte of the reply after a CLUSTER SLOTS: '*' is the slot array. */
    private void seen(byte first) {
      if (slotsReplyDue) {
        slotsReplyDue = false;
        if (first == '*') {
          MARKS.get()[2]++;
        }
      }
    }

    @Override
    public synchronized OutputStream getOutputStream() throws IOException {
      if (out == null) {
        out = new FilterOutputStream(inner.getOutputStream()) {
          private int matched;

          @Override
          public void write(int b) throws IOException {
            match((byte) b);
            out.write(b);
          }

          @Override
          public void write(byte[] buf, int off, int len) throws IOException {
            for (int k = off; k < off + len; k++) {
              match(buf[k]);
            }
            out.write(buf, off, len);
          }

          private void match(byte b) {
            // '*' occurs in CLUSTER_SLOTS only at its start: on a mismatch the match restarts
            // there or at 0, exactly.
            if (b == CLUSTER_SLOTS[matched]) {
              matched++;
            } else {
              matched = b == CLUSTER_SLOTS[0] ? 1 : 0;
            }
            if (matched == CLUSTER_SLOTS.length) {
              matched = 0;
              counts.clusterSlotsCalls.incrementAndGet();
              MARKS.get()[1]++;
              slotsReplyDue = true;
            }
          }
        };
      }
      return out;
    }

    @Override
    public int getSoTimeout() throws SocketException {
      return inner.getSoTimeout();
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
      inner.setSoTimeout(timeout);
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
      inner.setKeepAlive(on);
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
      inner.setTcpNoDelay(on);
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
      inner.setSoLinger(on, linger);
    }

    @Override
    public synchronized void close() throws IOException {
      inner.close();
    }

    @Override
    public void shutdownInput() throws IOException {
      inner.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
      inner.shutdownOutput();
    }

    @Override
    public boolean isConnected() {
      return inner.isConnected();
    }

    @Override
    public boolean isBound() {
      return inner.isBound();
    }

    @Override
    public boolean isClosed() {
      return inner.isClosed();
    }

    @Override
    public boolean isInputShutdown() {
      return inner.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
      return inner.isOutputShutdown();
    }

    @Override
    public InetAddress getInetAddress() {
      return inner.getInetAddress();
    }

    @Override
    public int getPort() {
      return inner.getPort();
    }

    @Override
    public int getLocalPort() {
      return inner.getLocalPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
      return inner.getRemoteSocketAddress();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
      return inner.getLocalSocketAddress();
    }

    @Override
    public String toString() {
      return inner.toString();
    }
  }
}

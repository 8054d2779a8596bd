import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.transport.TransportAddress;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node in this JVM, for the local runtime and the tests (started by functions/local/opensearch-node.ts).
 *
 * <p>Arguments: the node's home folder, its data folder and its HTTP port (0: one the system picks). It binds HTTP and
 * transport (on a port the system picks) to 127.0.0.1 only, forms a single-node cluster, then prints one line {@code http=127.0.0.1:<port>} on standard output. It stops
 * (closing the node, so that Lucene's files are consistent) when standard input reaches its end, which is how it dies
 * with its parent however that parent ends, or on SIGTERM.
 */
public final class EmbeddedOpenSearch {
  /** Node's constructor with a plugin list is protected: this subclass only opens it. */
  private static final class PluginNode extends Node {
    PluginNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
      super(environment, plugins, true);
    }
  }

  private EmbeddedOpenSearch() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: EmbeddedOpenSearch <home folder> <data folder> <HTTP port, 0: any>");
      System.exit(2);
    }
    Settings settings =
        Settings.builder()
            .put("cluster.name", "dss-local")
            .put("node.name", "dss-local")
            .put("path.home", Path.of(args[0]).toString())
            .put("path.data", Path.of(args[1]).toString())
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", args[2])
            .put("transport.port", "0")
            // A laptop's disk may be fuller than the watermarks allow; a local node must still accept writes.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .build();
    Environment environment =
        InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "dss-local");
    Node node = new PluginNode(environment, List.of(Netty4Plugin.class, CommonAnalysisPlugin.class));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> close(node), "opensearch-shutdown"));
    node.start();
    TransportAddress http = node.injector().getInstance(HttpServerTransport.class).boundAddress().publishAddress();
    System.out.println("http=" + http.getAddress() + ":" + http.getPort());
    System.out.flush();
    // The parent holds our standard input: its end (the parent exited, even by SIGKILL) stops the node. The node's
    // own threads are daemons, so this main thread is also what keeps the JVM alive.
    try (InputStream in = System.in) {
      while (in.read() != -1) {
        // Nothing is sent on it; read until the end.
      }
    } catch (IOException ignored) {
      // A broken pipe is an end too.
    }
    System.exit(0);
  }

  /** Closes the node, waiting up to 10 s for its threads. */
  private static void close(Node node) {
    try {
      node.close();
      node.awaitClose(10, TimeUnit.SECONDS);
    } catch (IOException | InterruptedException error) {
      System.err.println("closing the OpenSearch node failed: " + error);
    }
  }
}

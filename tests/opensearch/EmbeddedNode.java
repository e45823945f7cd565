// A single OpenSearch node in this JVM for the Elasticsearch connector's tests (tests/opensearch_server.py).
// The HTTP transport (Netty 4) and the reindex module are loaded from the class path as plugins; nothing is
// read from an OpenSearch distribution. Arguments: <home dir> <http port> <transport port>. It prints
// "READY <port>" once the node is started, and stops when its standard input closes.
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;

import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

public final class EmbeddedNode extends Node {
    private EmbeddedNode(Environment env, Collection<Class<? extends Plugin>> plugins) {
        super(env, plugins, true);
    }

    public static void main(String[] args) throws Exception {
        Path home = Paths.get(args[0]);
        Settings settings = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("cluster.name", "seatunnel-tests")
            .put("node.name", "node-1")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", args[1])
            .put("transport.port", args[2])
            .put("http.type", "netty4")
            .put("transport.type", "netty4")
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", true)
            .put("node.max_local_storage_nodes", 1)
            .build();
        Environment env = InternalSettingsPreparer.prepareEnvironment(settings, Collections.emptyMap(), null, () -> "node-1");
        Collection<Class<? extends Plugin>> plugins = Arrays.asList(Netty4Plugin.class, ReindexPlugin.class);
        Node node = new EmbeddedNode(env, plugins);
        node.start();
        System.out.println("READY " + args[1]);
        System.out.flush();
        while (System.in.read() >= 0) { /* wait for the parent to close stdin */ }
        node.close();
        System.exit(0);
    }
}

// One NameNode and one DataNode of HDFS in this JVM for the tests (tests/hdfs_server.py), on loopback, every port
// chosen by the kernel, replication 1, permissions off, its storage under the given root directory.
// Arguments: <root dir>. It prints "STARTED <namenode rpc port>" once the DataNode has registered with the
// NameNode and the NameNode left safe mode, and stops when its standard input closes.
import java.io.File;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;

public final class MiniHdfs {
    private MiniHdfs() {}

    public static void main(String[] args) throws Exception {
        File root = new File(args[0]);
        Configuration conf = new HdfsConfiguration();
        conf.set("hadoop.tmp.dir", new File(root, "tmp").getPath());
        conf.set("dfs.namenode.name.dir", new File(root, "name").toURI().toString());
        conf.set("dfs.datanode.data.dir", new File(root, "data").toURI().toString());
        conf.set("fs.defaultFS", "hdfs://127.0.0.1:0");
        conf.set("dfs.namenode.rpc-address", "127.0.0.1:0");
        conf.set("dfs.namenode.http-address", "127.0.0.1:0");
        conf.set("dfs.datanode.address", "127.0.0.1:0");
        conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
        conf.set("dfs.datanode.http.address", "127.0.0.1:0");
        conf.set("dfs.datanode.hostname", "127.0.0.1");
        conf.setBoolean("dfs.namenode.datanode.registration.ip-hostname-check", false);
        conf.setInt("dfs.replication", 1);
        conf.setBoolean("dfs.permissions.enabled", false);
        conf.setInt("dfs.namenode.safemode.extension", 0);
        conf.setInt("dfs.namenode.handler.count", 4);
        conf.setInt("dfs.datanode.handler.count", 4);
        conf.setLong("dfs.heartbeat.interval", 1);
        conf.setInt("dfs.namenode.heartbeat.recheck-interval", 5000);

        DefaultMetricsSystem.setMiniClusterMode(true);  // the format's name system and the NameNode's both register
        NameNode.format(conf);
        NameNode namenode = NameNode.createNameNode(new String[0], conf);
        int port = namenode.getNameNodeAddress().getPort();
        conf.set("fs.defaultFS", "hdfs://127.0.0.1:" + port);
        conf.set("dfs.namenode.rpc-address", "127.0.0.1:" + port);
        DataNode datanode = DataNode.createDataNode(new String[0], conf);
        while (namenode.getNamesystem().getNumLiveDataNodes() < 1 || namenode.isInSafeMode()
                || !datanode.isDatanodeFullyStarted()) {
            Thread.sleep(50);
        }
        System.out.println("STARTED " + port);
        System.out.flush();
        while (System.in.read() >= 0) { /* wait for the parent to close stdin */ }
        datanode.shutdown();
        namenode.stop();
        System.exit(0);
    }
}

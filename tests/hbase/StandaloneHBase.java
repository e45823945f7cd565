// A standalone HBase in this JVM for the Hbase connector's tests (tests/hbase_server.py): its own ZooKeeper, one
// master and one region server on the local file system, and HBase's Thrift 1 gateway, all on loopback.
// Arguments: <root dir> <zookeeper port> <thrift port>. It prints "STARTED <thrift port>" once the master is
// initialised and the gateway listens, and stops when its standard input closes.
import java.io.File;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.LocalHBaseCluster;
import org.apache.hadoop.hbase.master.HMaster;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.thrift.ThriftServer;
import org.apache.hadoop.hbase.zookeeper.MiniZooKeeperCluster;

public final class StandaloneHBase {
    private StandaloneHBase() {}

    public static void main(String[] args) throws Exception {
        File root = new File(args[0]);
        int zkPort = Integer.parseInt(args[1]);
        String thriftPort = args[2];
        Configuration conf = HBaseConfiguration.create();
        conf.set("hbase.rootdir", new File(root, "hbase").toURI().toString());
        conf.set("hbase.tmp.dir", new File(root, "tmp").getPath());
        conf.set("hbase.cluster.distributed", "false");
        conf.set("hbase.zookeeper.quorum", "127.0.0.1");
        conf.setInt("hbase.zookeeper.property.clientPort", zkPort);
        conf.set("hbase.master.hostname", "127.0.0.1");
        conf.set("hbase.regionserver.hostname", "127.0.0.1");
        conf.setInt("hbase.master.port", 0);
        conf.setInt("hbase.regionserver.port", 0);
        conf.setInt("hbase.master.info.port", -1);
        conf.setInt("hbase.regionserver.info.port", -1);
        conf.setInt("hbase.thrift.info.port", -1);
        conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
        conf.setInt("hbase.regionserver.handler.count", 5);
        conf.setInt("hbase.master.wait.on.regionservers.mintostart", 1);
        conf.set("hbase.regionserver.thrift.ipaddress", "127.0.0.1");

        MiniZooKeeperCluster zk = new MiniZooKeeperCluster(conf);
        zk.setDefaultClientPort(zkPort);
        zk.startup(new File(root, "zookeeper"));
        LocalHBaseCluster cluster = new LocalHBaseCluster(conf, 1, 1, HMaster.class, HRegionServer.class);
        cluster.startup();
        while (cluster.getActiveMaster() == null || !cluster.getActiveMaster().isInitialized()) {
            Thread.sleep(100);
        }
        ThriftServer thrift = new ThriftServer(conf);
        Thread gateway = new Thread(() -> {
            try {
                thrift.run(new String[] {"-b", "127.0.0.1", "-p", thriftPort, "start"});
            } catch (Exception e) {
                e.printStackTrace();
                System.exit(3);
            }
        }, "thrift-gateway");
        gateway.setDaemon(true);
        gateway.start();
        System.out.println("STARTED " + thriftPort);
        System.out.flush();
        while (System.in.read() >= 0) { /* wait for the parent to close stdin */ }
        thrift.stop();
        cluster.shutdown();
        zk.shutdown();
        System.exit(0);
    }
}

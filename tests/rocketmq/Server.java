// A RocketMQ broker for tests, with a minimal name server in the same JVM (Maven Central serves
// org.apache.rocketmq:rocketmq-broker but not rocketmq-namesrv). The name server answers what a single
// broker and its clients ask: a broker registers its topics (REGISTER_BROKER, repeated on every topic
// change and every 30 s), clients ask a topic's route (GET_ROUTEINFO_BY_TOPIC) and the cluster's brokers.
// Run in Java's source-file mode: java -cp <broker jars> Server.java NAMESRV_PORT BROKER_PORT HA_PORT ROOT
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;

import io.netty.channel.ChannelHandlerContext;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.BrokerStartup;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingServer;
import org.apache.rocketmq.remoting.netty.NettyRequestProcessor;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.body.RegisterBrokerBody;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;

public class Server {
    static final int REGISTER_BROKER = 103, UNREGISTER_BROKER = 104, GET_ROUTE = 105, GET_CLUSTER = 106;
    static final Map<String, TopicConfig> TOPICS = new ConcurrentHashMap<>();
    static volatile BrokerData broker;

    static RemotingCommand handle(RemotingCommand request) throws Exception {
        Map<String, String> ext = request.getExtFields() == null ? Map.of() : request.getExtFields();
        switch (request.getCode()) {
            case REGISTER_BROKER: {
                boolean compressed = Boolean.parseBoolean(ext.getOrDefault("compressed", "false"));
                MQVersion.Version version = MQVersion.Version.values()[request.getVersion()];
                RegisterBrokerBody body = RegisterBrokerBody.decode(request.getBody(), compressed, version);
                HashMap<Long, String> addrs = new HashMap<>();
                addrs.put(Long.parseLong(ext.get("brokerId")), ext.get("brokerAddr"));
                broker = new BrokerData(ext.get("clusterName"), ext.get("brokerName"), addrs);
                TOPICS.putAll(body.getTopicConfigSerializeWrapper().getTopicConfigTable());
                return RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
            }
            case UNREGISTER_BROKER:
                return RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
            case GET_ROUTE: {
                TopicConfig topic = TOPICS.get(ext.get("topic"));
                BrokerData b = broker;
                if (topic == null || b == null) {
                    return RemotingCommand.createResponseCommand(ResponseCode.TOPIC_NOT_EXIST,
                        "No topic route info in name server for the topic: " + ext.get("topic"));
                }
                QueueData q = new QueueData();
                q.setBrokerName(b.getBrokerName());
                q.setReadQueueNums(topic.getReadQueueNums());
                q.setWriteQueueNums(topic.getWriteQueueNums());
                q.setPerm(topic.getPerm());
                q.setTopicSysFlag(topic.getTopicSysFlag());
                TopicRouteData route = new TopicRouteData();
                route.setQueueDatas(List.of(q));
                route.setBrokerDatas(List.of(b));
                route.setFilterServerTable(new HashMap<>());
                RemotingCommand response = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
                response.setBody(route.encode());
                return response;
            }
            case GET_CLUSTER: {
                ClusterInfo info = new ClusterInfo();
                BrokerData b = broker;
                HashMap<String, BrokerData> brokers = new HashMap<>();
                HashMap<String, java.util.Set<String>> clusters = new HashMap<>();
                if (b != null) {
                    brokers.put(b.getBrokerName(), b);
                    clusters.put(b.getCluster(), java.util.Set.of(b.getBrokerName()));
                }
                info.setBrokerAddrTable(brokers);
                info.setClusterAddrTable(clusters);
                RemotingCommand response = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
                response.setBody(info.encode());
                return response;
            }
            default:
                return RemotingCommand.createResponseCommand(ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                    "not supported by the test name server: " + request.getCode());
        }
    }

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    static void run(String[] args) throws Exception {
        int namesrvPort = Integer.parseInt(args[0]), brokerPort = Integer.parseInt(args[1]);
        int haPort = Integer.parseInt(args[2]);
        Path root = Path.of(args[3]);
        NettyServerConfig config = new NettyServerConfig();
        config.setBindAddress("127.0.0.1");
        config.setListenPort(namesrvPort);
        NettyRemotingServer names = new NettyRemotingServer(config);
        names.registerDefaultProcessor(new NettyRequestProcessor() {
            public RemotingCommand processRequest(ChannelHandlerContext ctx, RemotingCommand request) throws Exception {
                return handle(request);
            }
            public boolean rejectRequest() { return false; }
        }, Executors.newFixedThreadPool(2));
        names.start();

        Path store = root.resolve("store");
        String conf = String.join("\n",
            "brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=0",
            "brokerIP1=127.0.0.1", "bindAddress=127.0.0.1", "listenPort=" + brokerPort, "haListenPort=" + haPort,
            "namesrvAddr=127.0.0.1:" + namesrvPort, "autoCreateTopicEnable=true",
            "autoCreateSubscriptionGroup=true", "defaultTopicQueueNums=4",
            "storePathRootDir=" + store, "storePathCommitLog=" + store.resolve("commitlog"),
            "mappedFileSizeCommitLog=8388608", "mappedFileSizeConsumeQueue=120000",
            "mappedFileSizeConsumeQueueExt=1048576", "maxHashSlotNum=5000", "maxIndexNum=20000",
            "timerWheelEnable=false", "diskMaxUsedSpaceRatio=95", "flushDiskType=ASYNC_FLUSH",
            "enableControllerMode=false", "traceTopicEnable=false", "");
        Path file = root.resolve("broker.conf");
        Files.writeString(file, conf);
        BrokerController controller = BrokerStartup.createBrokerController(new String[] {"-c", file.toString()});
        BrokerStartup.start(controller);
        // the broker's first registration comes 10 s after its start: the name server learns the broker and
        // its topics from it here at once (later registrations, on every topic change, go over the wire)
        HashMap<Long, String> addrs = new HashMap<>();
        addrs.put(0L, "127.0.0.1:" + brokerPort);
        if (broker == null) {
            broker = new BrokerData("DefaultCluster", "broker-a", addrs);
        }
        controller.getTopicConfigManager().getTopicConfigTable().forEach(TOPICS::putIfAbsent);
        System.out.println("test name server and broker started");
        System.out.flush();
    }
}

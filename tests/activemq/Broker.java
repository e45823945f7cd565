// A private ActiveMQ Classic broker for the tests (tests/activemq_server.py runs this file in Java's source-file
// mode): one "auto" transport on 127.0.0.1:<port> (OpenWire and STOMP on one port), a user and password, messages in
// memory. Arguments: port, user, password, data directory. Prints "broker started" once it accepts connections.
import java.util.List;

import org.apache.activemq.broker.BrokerPlugin;
import org.apache.activemq.broker.BrokerService;
import org.apache.activemq.security.AuthenticationUser;
import org.apache.activemq.security.SimpleAuthenticationPlugin;

public class Broker {
    public static void main(String[] args) throws Exception {
        BrokerService broker = new BrokerService();
        broker.setBrokerName("seatunnel-tests");
        broker.setPersistent(false);
        broker.setUseJmx(false);
        broker.setDataDirectory(args[3]);
        SimpleAuthenticationPlugin auth = new SimpleAuthenticationPlugin(
                List.of(new AuthenticationUser(args[1], args[2], "users")));
        broker.setPlugins(new BrokerPlugin[] {auth});
        broker.addConnector("auto://127.0.0.1:" + args[0]);
        broker.start();
        broker.waitUntilStarted();
        System.out.println("broker started");
        System.out.flush();
        broker.waitUntilStopped();
    }
}

// Starts a throwaway Neo4j 5 Community server from the Maven jars through
// Neo4j's documented embedded API, with the Bolt connector on 127.0.0.1 and
// HTTP off. Usage: java -cp 'lib/*' Launcher.java DATA_DIR PORT
// Settings in DATA_DIR/neo4j.conf, when there is one, come first.
import java.nio.file.Files;
import java.nio.file.Path;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

public class Launcher {
    public static void main(String[] args) throws Exception {
        Path home = Path.of(args[0]);
        int port = Integer.parseInt(args[1]);
        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home);
        Path conf = home.resolve("neo4j.conf");
        if (Files.exists(conf)) {
            builder.loadPropertiesFromFile(conf);
        }
        DatabaseManagementService dbms = builder
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown));
        System.out.println("neo4j ready bolt://127.0.0.1:" + port);
        System.out.flush();
        Thread.currentThread().join();
    }
}

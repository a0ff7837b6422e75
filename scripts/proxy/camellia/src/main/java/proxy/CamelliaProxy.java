package proxy;

import com.netease.nim.camellia.redis.proxy.springboot.EnableCamelliaRedisProxyServer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * camellia-redis-proxy on one loopback port in front of a Redis Cluster. The port and the
 * cluster's seed nodes come from the command line (see application.yml):
 * {@code --camellia-redis-proxy.port=PORT --camellia-redis-proxy.transpond.local.resource=redis-cluster://@127.0.0.1:P1,127.0.0.1:P2}.
 */
@SpringBootApplication
@EnableCamelliaRedisProxyServer
public class CamelliaProxy {
    public static void main(String[] args) {
        SpringApplication.run(CamelliaProxy.class, args);
    }
}

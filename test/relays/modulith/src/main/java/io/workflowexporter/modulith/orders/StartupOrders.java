package io.workflowexporter.modulith.orders;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;

/** Places {@code modulith-app.startup-orders} orders (default 1) when the application has started. */
@Component
class StartupOrders implements ApplicationRunner {

    private final Orders orders;
    private final int count;

    StartupOrders(Orders orders, @Value("${modulith-app.startup-orders:1}") int count) {
        this.orders = orders;
        this.count = count;
    }

    @Override
    public void run(ApplicationArguments args) {
        for (int i = 1; i <= count; i++) {
            orders.place("startup-" + i);
        }
    }
}

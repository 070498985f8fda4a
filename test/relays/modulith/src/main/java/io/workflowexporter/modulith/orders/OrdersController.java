package io.workflowexporter.modulith.orders;

import java.util.Map;
import java.util.UUID;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The application's HTTP endpoints: {@code POST /orders[?id=ID]} places an order (publishes one
 * event to both listeners) and answers {"orderId": ID}; {@code GET /health} answers "ok" once the
 * web server runs (the startup orders may still be on their way then).
 */
@RestController
class OrdersController {

    private final Orders orders;

    OrdersController(Orders orders) {
        this.orders = orders;
    }

    @PostMapping("/orders")
    Map<String, String> place(@RequestParam(name = "id", required = false) String id) {
        String orderId = id == null || id.isBlank() ? UUID.randomUUID().toString() : id;
        orders.place(orderId);
        return Map.of("orderId", orderId);
    }

    @GetMapping("/health")
    String health() {
        return "ok";
    }
}

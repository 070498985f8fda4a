package io.workflowexporter.modulith.shipping;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;

import io.workflowexporter.modulith.orders.OrderPlaced;

/** The listener that completes: its publication is marked completed. */
@Component
class Shipping {

    private static final Logger LOG = LoggerFactory.getLogger(Shipping.class);

    @ApplicationModuleListener
    void on(OrderPlaced event) {
        LOG.info("shipping order {}", event.orderId());
    }
}

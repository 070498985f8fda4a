package io.workflowexporter.modulith.orders;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places orders: publishes {@link OrderPlaced} inside a transaction, so the event publication
 * registry writes one row per listener into event_publication in that transaction, and the
 * listeners run after it commits.
 */
@Service
public class Orders {

    private static final Logger LOG = LoggerFactory.getLogger(Orders.class);

    private final ApplicationEventPublisher events;

    Orders(ApplicationEventPublisher events) {
        this.events = events;
    }

    @Transactional
    public void place(String orderId) {
        LOG.info("placing order {}", orderId);
        events.publishEvent(new OrderPlaced(orderId));
    }
}

package io.workflowexporter.modulith.billing;

import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;

import io.workflowexporter.modulith.orders.OrderPlaced;

/** The listener that fails: its publication stays incomplete, with status FAILED. */
@Component
class Billing {

    @ApplicationModuleListener
    void on(OrderPlaced event) {
        throw new IllegalStateException("billing is down: order " + event.orderId() + " not charged");
    }
}

package io.workflowexporter.modulith.orders;

/** The event the orders module publishes. */
public record OrderPlaced(String orderId) {
}

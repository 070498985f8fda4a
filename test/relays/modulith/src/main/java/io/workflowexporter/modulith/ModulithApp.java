package io.workflowexporter.modulith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableAsync;

/**
 * A Spring Modulith application with three modules: orders publishes {@code OrderPlaced} in a
 * transaction, shipping's listener completes, billing's listener throws. The JDBC event
 * publication registry records one publication per event and listener in event_publication:
 * shipping's is completed, billing's stays incomplete with status FAILED. See
 * test/relays/README.md.
 */
@SpringBootApplication
@EnableAsync
public class ModulithApp {

    public static void main(String[] args) {
        SpringApplication.run(ModulithApp.class, args);
    }
}

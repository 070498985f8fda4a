package io.workflowexporter.testengine;

import @engine.package@.engine.impl.util.ClockUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Shifts the engine's clock (ClockUtil, which every engine timestamp and lock expiration uses) by
 * test-engine.clock-offset-ms, so one node of a two-node test cluster runs seconds ahead of the
 * other, as unsynchronised hosts do. The JVM's own clock (HTTP Date headers, logs) is untouched;
 * faketime is no option, it hangs the JVM.
 *
 * <p>InitializingBean rather than @PostConstruct: the annotation is javax.annotation on Spring
 * Boot 2 (Camunda 7.19) and jakarta.annotation on Spring Boot 3, and these sources compile on both.
 */
@Component
public class EngineClockOffset implements InitializingBean {

  private static final Logger LOG = LoggerFactory.getLogger(EngineClockOffset.class);

  @Value("${test-engine.clock-offset-ms:0}")
  private long offsetMillis;

  @Override
  public void afterPropertiesSet() {
    if (offsetMillis != 0) {
      ClockUtil.offset(offsetMillis);
      LOG.info("engine clock offset by {} ms", offsetMillis);
    }
  }
}

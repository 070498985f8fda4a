package io.workflowexporter.testengine;

import java.util.Map;

import @engine.package@.engine.rest.security.auth.ProcessEngineAuthenticationFilter;
import @engine.package@.engine.rest.security.auth.impl.HttpBasicAuthenticationProvider;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/** Camunda 7 or Operaton engine with the REST API for the exporter's integration tests. */
@SpringBootApplication
public class TestEngineApplication {

  public static void main(String[] args) {
    SpringApplication.run(TestEngineApplication.class, args);
  }

  /** HTTP basic auth on /engine-rest/*, only when test-engine.basic-auth=true. */
  @Bean
  @ConditionalOnProperty(name = "test-engine.basic-auth", havingValue = "true")
  public FilterRegistrationBean<ProcessEngineAuthenticationFilter> engineRestBasicAuth() {
    FilterRegistrationBean<ProcessEngineAuthenticationFilter> bean =
        new FilterRegistrationBean<>(new ProcessEngineAuthenticationFilter());
    bean.setName("engine-rest-basic-auth");
    bean.addUrlPatterns("/engine-rest/*");
    bean.setInitParameters(Map.of(
        ProcessEngineAuthenticationFilter.AUTHENTICATION_PROVIDER_PARAM,
        HttpBasicAuthenticationProvider.class.getName()));
    return bean;
  }
}

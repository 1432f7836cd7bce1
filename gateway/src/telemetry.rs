//! Logs (tracing) and metrics (Prometheus).

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;

/// The process-wide Prometheus recorder (installed once; every app in the process shares it).
pub fn metrics_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets(&[
                    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                ])
                .map(|b| b.build_recorder())
                .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
            let handle = recorder.handle();
            // Another recorder may already be installed (tests); then metrics go there.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// JSON logs to stdout, filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .json()
        .with_target(false)
        .try_init();
}

/// JSON logs on standard error (for `terrace mcp --stdio`, whose standard output is the protocol).
pub fn init_logging_stderr() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .json()
        .with_target(false)
        .with_writer(std::io::stderr)
        .try_init();
}

pub fn record_call(operation: &str, status: u16, seconds: f64, credits: i64) {
    let labels = [
        ("operation", operation.to_string()),
        ("status", status.to_string()),
    ];
    metrics::counter!("terrace_requests_total", &labels).increment(1);
    metrics::histogram!("terrace_request_duration_seconds", "operation" => operation.to_string())
        .record(seconds);
    if credits > 0 {
        metrics::counter!("terrace_credits_charged_total", "operation" => operation.to_string())
            .increment(credits as u64);
    }
}

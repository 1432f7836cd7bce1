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
                .and_then(|b| {
                    // The ledger writer's batch sizes are counts of calls, not seconds.
                    b.set_buckets_for_metric(
                        metrics_exporter_prometheus::Matcher::Full(
                            "terrace_ledger_batch_size".into(),
                        ),
                        &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0],
                    )
                })
                .map(|b| b.build_recorder())
                .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
            let handle = recorder.handle();
            // Another recorder may already be installed (tests); then metrics go there.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// The per-request span of `tracing-actix-web`'s middleware (which also gives each request its
/// id), at debug level: at the default `info` a request costs no span (formatting its dozen
/// fields and entering it at every poll was a measurable share of a cheap call), and its one
/// access log line is the `call` event the gateway writes with the request id, operation,
/// status and credits. `RUST_LOG=debug` brings the span, and its fields on every line, back.
pub struct RequestSpan;

impl tracing_actix_web::RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &actix_web::dev::ServiceRequest) -> tracing::Span {
        // `root_span!` reads the span's fields before the level decides (the peer address
        // formatted, the route matched a second time for its pattern): 4% of a charged call's
        // CPU in the issue 20 profile, for a span that `info` then drops.
        if !tracing::enabled!(tracing::Level::DEBUG) {
            return tracing::Span::none();
        }
        tracing_actix_web::root_span!(level = tracing_actix_web::Level::DEBUG, request)
    }

    fn on_request_end<B: actix_web::body::MessageBody>(
        span: tracing::Span,
        outcome: &Result<actix_web::dev::ServiceResponse<B>, actix_web::Error>,
    ) {
        if !span.is_disabled() {
            tracing_actix_web::DefaultRootSpanBuilder::on_request_end(span, outcome);
        }
    }
}

/// The access log line of one call (`"call"`, at info), written as the JSON formatter writes it
/// (`{"timestamp":..,"level":"INFO","fields":{"message":"call",..}}`) but formatted here and
/// queued to the log thread directly: through `tracing-subscriber` the line was 5.6% of a charged
/// call's CPU (issue 20, session 15). Where the formatter would add something this does not
/// write (a current span, at `debug`), or without the log thread, the event goes through
/// `tracing` as before. `enabled` is the caller's `tracing::enabled!(Level::INFO)`, so that the
/// filter applies to the caller's module as it did to its event.
pub fn log_call(
    enabled: bool,
    request_id: &str,
    operation: &str,
    surface: Option<&str>,
    status: u16,
    credits: i64,
) {
    if !enabled {
        return;
    }
    let queue = LOG_QUEUE.get().filter(|_| {
        !tracing::enabled!(tracing::Level::DEBUG) && tracing::Span::current().is_none()
    });
    let Some(queue) = queue else {
        match surface {
            Some(surface) => {
                tracing::info!(request_id, operation, surface, status, credits, "call")
            }
            None => tracing::info!(request_id, operation, status, credits, "call"),
        }
        return;
    };
    let _ = queue.send(LogMsg::Line(call_line(
        std::time::SystemTime::now(),
        request_id,
        operation,
        surface,
        status,
        credits,
    )));
}

/// The `call` line's bytes, newline included.
fn call_line(
    at: std::time::SystemTime,
    request_id: &str,
    operation: &str,
    surface: Option<&str>,
    status: u16,
    credits: i64,
) -> Vec<u8> {
    use std::io::Write;
    let mut line = Vec::with_capacity(192);
    line.extend_from_slice(b"{\"timestamp\":\"");
    write_timestamp(&mut line, at);
    line.extend_from_slice(
        b"\",\"level\":\"INFO\",\"fields\":{\"message\":\"call\",\"request_id\":",
    );
    let _ = serde_json::to_writer(&mut line, request_id);
    line.extend_from_slice(b",\"operation\":");
    let _ = serde_json::to_writer(&mut line, operation);
    if let Some(surface) = surface {
        line.extend_from_slice(b",\"surface\":");
        let _ = serde_json::to_writer(&mut line, surface);
    }
    let _ = writeln!(line, ",\"status\":{status},\"credits\":{credits}}}}}");
    line
}

thread_local! {
    /// The second last formatted by this thread, and its text up to the seconds.
    static LAST_SECOND: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
}

/// `at` as RFC 3339 in UTC with microseconds (`2026-11-27T00:30:12.123456Z`), as
/// `tracing-subscriber`'s timer writes it; the date and time up to the second are formatted once
/// a second per thread.
fn write_timestamp(out: &mut Vec<u8>, at: std::time::SystemTime) {
    use std::io::Write;
    let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    LAST_SECOND.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != secs {
            let time = chrono::DateTime::<chrono::Utc>::from(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
            );
            last.1 = time.format("%Y-%m-%dT%H:%M:%S").to_string();
            last.0 = secs;
        }
        out.extend_from_slice(last.1.as_bytes());
    });
    let _ = write!(out, ".{:06}Z", since.subsec_micros());
}

/// What the log thread receives: a formatted line, or a request to report once everything
/// before it is written.
enum LogMsg {
    Line(Vec<u8>),
    Flush(std::sync::mpsc::Sender<()>),
}

/// The sending side of the log thread (set by [`init_logging`]).
static LOG_QUEUE: OnceLock<std::sync::mpsc::SyncSender<LogMsg>> = OnceLock::new();

/// Lines a request thread may queue before it waits for the log thread (never dropped).
const LOG_QUEUE_LINES: usize = 16_384;

/// How long the log thread waits after a write before it looks at the queue again: a line is
/// written at most about this long after its event.
const LOG_INTERVAL: std::time::Duration = std::time::Duration::from_millis(2);

/// Standard output written by a thread of its own: a request formats its line and queues it,
/// and the log thread writes whatever is queued with one `write` (a slow reader of standard
/// output no longer delays calls, and many lines cost one system call). Lines are never
/// dropped: a full queue makes the request wait, as a direct write would.
struct QueuedStdout(std::sync::mpsc::SyncSender<LogMsg>);

/// One event's line, queued when the formatter is done with it.
struct QueuedLine<'a> {
    buf: Vec<u8>,
    tx: &'a std::sync::mpsc::SyncSender<LogMsg>,
}

impl std::io::Write for QueuedLine<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for QueuedLine<'_> {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let _ = self.tx.send(LogMsg::Line(std::mem::take(&mut self.buf)));
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for QueuedStdout {
    type Writer = QueuedLine<'a>;

    fn make_writer(&'a self) -> QueuedLine<'a> {
        QueuedLine {
            buf: Vec::with_capacity(256),
            tx: &self.0,
        }
    }
}

fn spawn_log_thread() -> std::io::Result<std::sync::mpsc::SyncSender<LogMsg>> {
    use std::io::Write;
    let (tx, rx) = std::sync::mpsc::sync_channel::<LogMsg>(LOG_QUEUE_LINES);
    std::thread::Builder::new()
        .name("terrace-log".into())
        .spawn(move || {
            let mut batch: Vec<u8> = Vec::with_capacity(1 << 16);
            while let Ok(first) = rx.recv() {
                let mut flushed = Vec::new();
                let mut next = Some(first);
                while let Some(msg) = next {
                    match msg {
                        LogMsg::Line(l) => batch.extend_from_slice(&l),
                        LogMsg::Flush(done) => flushed.push(done),
                    }
                    next = if batch.len() < (1 << 16) {
                        rx.try_recv().ok()
                    } else {
                        None
                    };
                }
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&batch);
                let _ = out.flush();
                batch.clear();
                let asked = !flushed.is_empty();
                for done in flushed {
                    let _ = done.send(());
                }
                // Lines arriving meanwhile queue without waking this thread: under load one
                // wake-up and one `write` per interval instead of one per few lines (the
                // wake-ups were the thread's cost in the issue 20 profile). A flush request is
                // answered at once.
                if !asked {
                    std::thread::sleep(LOG_INTERVAL);
                }
            }
        })?;
    Ok(tx)
}

/// JSON logs to stdout, filtered by `RUST_LOG` (default `info`), written by the log thread.
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .json()
        .with_target(false);
    let _ = match spawn_log_thread() {
        Ok(tx) => {
            let _ = LOG_QUEUE.set(tx.clone());
            builder.with_writer(QueuedStdout(tx)).try_init()
        }
        // No thread to spare: write directly.
        Err(_) => builder.try_init(),
    };
}

/// Waits until every line logged so far is written (before the process exits).
pub fn flush_logs() {
    if let Some(tx) = LOG_QUEUE.get() {
        let (done, wait) = std::sync::mpsc::channel();
        if tx.send(LogMsg::Flush(done)).is_ok() {
            let _ = wait.recv_timeout(std::time::Duration::from_secs(5));
        }
    }
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

/// The metric handles of one (operation, status) pair.
struct CallMetrics {
    requests: metrics::Counter,
    duration: metrics::Histogram,
    /// Registered at the first charged call (a free operation never shows the series).
    credits: Option<metrics::Counter>,
}

thread_local! {
    /// Each worker thread's handles, looked up in the recorder once per (operation, status):
    /// registering a metric hashes its name and labels and locks the registry, which per call was
    /// a measurable share of a cheap operation.
    static CALL_METRICS: std::cell::RefCell<std::collections::HashMap<(&'static str, u16), CallMetrics>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

pub fn record_call(operation: &'static str, status: u16, seconds: f64, credits: i64) {
    CALL_METRICS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let m = cache.entry((operation, status)).or_insert_with(|| {
            let labels = [
                ("operation", operation.to_string()),
                ("status", status.to_string()),
            ];
            CallMetrics {
                requests: metrics::counter!("terrace_requests_total", &labels),
                duration: metrics::histogram!(
                    "terrace_request_duration_seconds",
                    "operation" => operation.to_string()
                ),
                credits: None,
            }
        });
        m.requests.increment(1);
        m.duration.record(seconds);
        if credits > 0 {
            m.credits
                .get_or_insert_with(|| {
                    metrics::counter!(
                        "terrace_credits_charged_total",
                        "operation" => operation.to_string()
                    )
                })
                .increment(credits as u64);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tracing-subscriber`'s JSON formatter, as `init_logging` configures it, with its clock
    /// fixed at `at`: what the `call` event wrote before it was formatted by hand.
    fn through_tracing(at: std::time::SystemTime, surface: Option<&str>) -> String {
        #[derive(Clone, Default)]
        struct Buf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0
                    .lock()
                    .map_err(|_| std::io::ErrorKind::Other)?
                    .extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        struct Fixed(std::time::SystemTime);
        impl tracing_subscriber::fmt::time::FormatTime for Fixed {
            fn format_time(
                &self,
                w: &mut tracing_subscriber::fmt::format::Writer<'_>,
            ) -> std::fmt::Result {
                let mut out = Vec::new();
                write_timestamp(&mut out, self.0);
                w.write_str(std::str::from_utf8(&out).map_err(|_| std::fmt::Error)?)
            }
        }
        let buf = Buf::default();
        let out = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_target(false)
            .with_timer(Fixed(at))
            .with_writer(move || out.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || match surface {
            Some(surface) => tracing::info!(
                request_id = %"5f0c\"rid",
                operation = "address.uprn",
                surface,
                status = 200u16,
                credits = 1i64,
                "call"
            ),
            None => tracing::info!(
                request_id = %"5f0c\"rid",
                operation = "address.uprn",
                status = 200u16,
                credits = 1i64,
                "call"
            ),
        });
        let bytes = buf.0.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }

    #[test]
    fn the_call_line_is_the_line_the_json_formatter_wrote() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::new(1_795_738_449, 209_576_765);
        for surface in [None, Some("mcp")] {
            let ours = call_line(at, "5f0c\"rid", "address.uprn", surface, 200, 1);
            assert_eq!(
                String::from_utf8(ours).unwrap_or_default(),
                through_tracing(at, surface)
            );
        }
    }

    #[test]
    fn the_timestamp_is_rfc_3339_in_utc_with_microseconds() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::new(1_795_738_449, 209_576_765);
        let mut out = Vec::new();
        write_timestamp(&mut out, at);
        assert_eq!(out, b"2026-11-27T00:14:09.209576Z");
        // The same second again, from the thread's cache, then the next one.
        let mut again = Vec::new();
        write_timestamp(&mut again, at + std::time::Duration::from_micros(1));
        assert_eq!(again, b"2026-11-27T00:14:09.209577Z");
        let mut next = Vec::new();
        write_timestamp(&mut next, at + std::time::Duration::from_secs(1));
        assert_eq!(next, b"2026-11-27T00:14:10.209576Z");
    }
}

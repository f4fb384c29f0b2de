import Metrics
import Prometheus

/// The server's metrics, recorded through swift-metrics into a Prometheus registry of this
/// server's own (no process-wide bootstrap, so several servers in one process keep apart),
/// served as Prometheus text by `GET /metrics`:
///
/// - `vecsync_http_requests_total{route, method, status}`: requests answered;
/// - `vecsync_http_request_duration_seconds{route, method}`: a histogram of the time to make
///   each answer;
/// - `vecsync_http_request_bytes_total{route}`, `vecsync_http_response_bytes_total{route}`:
///   body bytes in (as announced by `Content-Length`) and out;
/// - `vecsync_pushes_total{space, result}`: pushes accepted, by space and result (`stored`,
///   `duplicate`, `covered`, `repaired`);
/// - `vecsync_store_errors_total{kind}`: store calls that failed (`unavailable`, `full`,
///   `other`).
///
/// A route is its template (`/v1/spaces/{space}/status`), so the label set stays small; a
/// path no route matches is `unmatched`.
public final class ServerMetrics: Sendable {
    /// Where the values are kept.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    /// Metrics kept in a new registry.
    public init() {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// One request answered with `status` after `duration`.
    func request(route: String, method: String, status: Int, duration: Duration, bytesIn: Int, bytesOut: Int) {
        Counter(
            label: "vecsync_http_requests_total",
            dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory
        ).increment()
        Metrics.Timer(
            label: "vecsync_http_request_duration_seconds", dimensions: [("route", route), ("method", method)],
            factory: factory
        ).record(duration: duration)
        if bytesIn > 0 {
            Counter(label: "vecsync_http_request_bytes_total", dimensions: [("route", route)], factory: factory)
                .increment(by: bytesIn)
        }
        if bytesOut > 0 {
            Counter(label: "vecsync_http_response_bytes_total", dimensions: [("route", route)], factory: factory)
                .increment(by: bytesOut)
        }
    }

    /// One push of `space` accepted with `result`.
    func push(space: String, result: String) {
        Counter(label: "vecsync_pushes_total", dimensions: [("space", space), ("result", result)], factory: factory)
            .increment()
    }

    /// One failed store call, of `kind`.
    func storeError(_ kind: String) {
        Counter(label: "vecsync_store_errors_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// Everything, in Prometheus's text format.
    func text() -> [UInt8] {
        registry.emitToBuffer()
    }
}

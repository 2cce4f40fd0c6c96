import { parseFlags, UsageError } from './flags';
import { SERVER_METRICS_FLAGS, serverMetricsOptions, TELEMETRY_FLAGS, telemetryOptions } from './telemetry-flags';

const telemetry = (argv: string[]) => telemetryOptions(parseFlags(argv, TELEMETRY_FLAGS));
const serverMetrics = (argv: string[]) => serverMetricsOptions(parseFlags(argv, SERVER_METRICS_FLAGS));

/** The UsageError message of `fn`, or a failure when it throws none. */
function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('no usage error');
}

describe('telemetryOptions', () => {
  it('serves no metrics and pushes none unless asked, lingering 15 s and pushing every 5 s when asked', () => {
    expect(telemetry([])).toEqual({ metrics_port: undefined, metrics_linger_s: 15, otlp: null, dashboard: null });
    expect(telemetry(['--metrics-port', '0', '--otlp-endpoint', 'http://collector:4318'])).toEqual({
      metrics_port: 0,
      metrics_linger_s: 15,
      otlp: { endpoint: 'http://collector:4318', interval_s: 5 },
      dashboard: null,
    });
  });

  it('serves a dashboard when given its port, lingering 30 s unless told; never on the metrics port', () => {
    expect(telemetry(['--dashboard-port', '0']).dashboard).toEqual({ port: 0, linger_s: 30 });
    expect(telemetry(['--dashboard-port', '8088', '--dashboard-linger-s', '0']).dashboard).toEqual({ port: 8088, linger_s: 0 });
    expect(() => telemetry(['--dashboard-port', '70000'])).toThrow('--dashboard-port must be a TCP port (0 to 65535), got 70000');
    expect(() => telemetry(['--dashboard-port', '9464', '--metrics-port', '9464'])).toThrow('--dashboard-port and --metrics-port are both 9464: give two ports');
    expect(telemetry(['--dashboard-port', '0', '--metrics-port', '0']).dashboard?.port).toBe(0);
  });

  it('takes the port, the linger and the push interval given', () => {
    expect(telemetry(['--metrics-port', '9464', '--metrics-linger-s', '0', '--otlp-endpoint', 'https://c.example/v1/metrics', '--otlp-interval-s', '0.5'])).toEqual({
      metrics_port: 9464,
      metrics_linger_s: 0,
      otlp: { endpoint: 'https://c.example/v1/metrics', interval_s: 0.5 },
      dashboard: null,
    });
    expect(telemetry(['--metrics-port', '65535']).metrics_port).toBe(65535);
  });

  it.each([
    [['--metrics-port', '65536'], '--metrics-port must be a TCP port (0 to 65535), got 65536'],
    [['--metrics-port', '-1'], '--metrics-port must be at least 0, got -1'],
    [['--otlp-interval-s', '0'], '--otlp-interval-s must be greater than 0, got 0'],
    [['--otlp-endpoint', 'collector:4318'], '--otlp-endpoint must be http:// or https://, got "collector:4318"'],
    [['--otlp-endpoint', 'not a url'], '--otlp-endpoint is not a URL: "not a url"'],
    [['--otlp-endpoint', 'grpc://collector:4317'], '--otlp-endpoint must be http:// or https://, got "grpc://collector:4317"'],
  ])('%j is bad input, named in one line', (argv, message) => {
    expect(usage(() => telemetry(argv))).toBe(message);
  });
});

describe('serverMetricsOptions', () => {
  it('scrapes nothing unless asked; once asked, every second with no extra histogram unless told', () => {
    expect(serverMetrics([])).toEqual({ server_metrics: null });
    expect(serverMetrics(['--server-metrics', 'http://127.0.0.1:8000/metrics'])).toEqual({
      server_metrics: { urls: ['http://127.0.0.1:8000/metrics'], interval_s: 1, histograms: [], gauges: [] },
    });
  });

  it('takes the interval and every histogram family named, in order', () => {
    const argv = ['--server-metrics', 'https://s/metrics', '--server-metrics-interval-s', '2.5', '--server-histogram', 'vllm:e2e_request_latency_seconds', '--server-histogram', 'my_ttfb_seconds'];
    expect(serverMetrics(argv)).toEqual({ server_metrics: { urls: ['https://s/metrics'], interval_s: 2.5, histograms: ['vllm:e2e_request_latency_seconds', 'my_ttfb_seconds'], gauges: [] } });
  });

  it('takes every gauge named, a label set chosen as NAME{label="v"}', () => {
    const argv = ['--server-metrics', 'http://s/metrics', '--server-gauge', 'DCGM_FI_DEV_FB_USED', '--server-gauge', 'DCGM_FI_DEV_GPU_UTIL{gpu="0"}'];
    expect(serverMetrics(argv).server_metrics?.gauges).toEqual(['DCGM_FI_DEV_FB_USED', 'DCGM_FI_DEV_GPU_UTIL{gpu="0"}']);
  });

  it.each([
    [['--server-histogram', 'my_seconds'], '--server-histogram goes with --server-metrics'],
    [['--server-metrics', 'ftp://s/metrics'], '--server-metrics must be http:// or https://, got "ftp://s/metrics"'],
    [['--server-metrics', '/metrics'], '--server-metrics is not a URL: "/metrics"'],
    [['--server-metrics', 'http://s/metrics', '--server-histogram', '9lives'], '--server-histogram "9lives" is not a Prometheus metric name'],
    [['--server-metrics', 'http://s/metrics', '--server-histogram', 'a-b'], '--server-histogram "a-b" is not a Prometheus metric name'],
    [['--server-metrics', 'http://s/metrics', '--server-metrics-interval-s', '0'], '--server-metrics-interval-s must be greater than 0, got 0'],
    [['--server-gauge', 'DCGM_FI_DEV_FB_USED'], '--server-gauge goes with --server-metrics'],
    [['--server-metrics', 'http://s/metrics', '--server-gauge', 'x{gpu=0}'], '--server-gauge "x{gpu=0}" is not NAME or NAME{label="value",…}'],
  ])('%j is bad input, named in one line', (argv, message) => {
    expect(usage(() => serverMetrics(argv))).toBe(message);
  });
});

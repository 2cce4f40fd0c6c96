import { counter, gauge, type Family } from './families';

/** What a mock server counts, read at scrape time. */
export interface MockSource {
  counts(): { opened: number; active: number; completed: number; accepted: number; refused: number; frames_sent: number; socket_errors: number };
}

/**
 * A GPU the mock does not have, loaded by its sessions (`serve --gpu-base-mib`, `--gpu-mib-per-session`,
 * `--gpu-util-per-session`): DCGM's framebuffer-used and utilisation gauges under DCGM's own names,
 * a test double so a capacity sweep's whole path (scrape, summary, sweep) runs here.
 */
export interface MockGpu {
  base_mib: number;
  mib_per_session: number;
  util_per_session: number;
}

export function mockFamilies(m: MockSource, gpu?: MockGpu): Family[] {
  return [
    ...(gpu
      ? [
          gauge('DCGM_FI_DEV_FB_USED', 'Framebuffer memory used, MiB (test double: --gpu-base-mib + active sessions x --gpu-mib-per-session)', () => [{ value: gpu.base_mib + m.counts().active * gpu.mib_per_session, labels: { gpu: '0' } }]),
          gauge('DCGM_FI_DEV_GPU_UTIL', 'GPU utilisation, % (test double: min(100, active sessions x --gpu-util-per-session))', () => [{ value: Math.min(100, m.counts().active * gpu.util_per_session), labels: { gpu: '0' } }]),
        ]
      : []),
    counter('duplex_bench_mock_sessions_opened_total', 'Sessions the mock opened', () => m.counts().opened),
    gauge('duplex_bench_mock_sessions_active', 'Sessions open on the mock now', () => m.counts().active),
    counter('duplex_bench_mock_sessions_completed_total', 'Sessions the mock ended as its dialect calls complete', () => m.counts().completed),
    counter('duplex_bench_mock_admissions_total', 'Admission decisions of the mock (--max-sessions), by outcome', () => {
      const c = m.counts();
      return [
        { value: c.accepted, labels: { outcome: 'accepted' } },
        { value: c.refused, labels: { outcome: 'refused' } },
      ];
    }),
    counter('duplex_bench_mock_frames_sent_total', 'Frames the mock sent', () => m.counts().frames_sent),
    counter('duplex_bench_mock_socket_errors_total', 'Socket errors on mock sessions', () => m.counts().socket_errors),
  ];
}

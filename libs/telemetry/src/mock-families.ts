import { counter, gauge, type Family } from './families';

/** What a mock server counts, read at scrape time. */
export interface MockSource {
  counts(): { opened: number; active: number; completed: number; accepted: number; refused: number; frames_sent: number; socket_errors: number };
}

export function mockFamilies(m: MockSource): Family[] {
  return [
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

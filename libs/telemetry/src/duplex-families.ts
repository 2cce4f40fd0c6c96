import type { Histogram } from '@duplex-bench/metrics';
import { counter, gauge, hdrHistogram, type Family } from './families';
import type { LiveResponses, LiveSessions } from './live-recorders';

/** What a duplex run (run, record) already counts, read at scrape time. */
export interface DuplexSource {
  packets(): { sent: number; late: number };
  /** |actual send start − deadline| of every packet, µs: the pacing recorder's histogram. */
  deviation: Histogram;
  /** Input streams opened so far and open now. */
  streams(): { started: number; active: number };
  sessions: LiveSessions;
  responses: LiveResponses;
  /** `--conversation`: the behaviour figures, known once the run ends (they come from the VAD's speech spans after the sessions); null before. */
  behaviour?(): LiveBehaviour | null;
}

/** The behaviour figures as the exposition serves them: latency histograms (µs) and event counts. */
export interface LiveBehaviour {
  response: Histogram;
  stop: Histogram;
  cancel: Histogram;
  pauses: number;
  takeovers: number;
  backchannels: number;
  yields: number;
}

const DEVIATION_BUCKETS_S = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.06, 0.08, 0.16, 0.32, 0.64, 1.28];
/** Steps of 25 ms up to 0.3 s, then about 15% apart: a quantile PromQL interpolates in a bucket is off by at most half its width. */
const LATENCY_BUCKETS_S = [0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25, 0.275, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.15, 1.3, 1.5, 1.75, 2, 2.5, 3, 4, 5, 7.5, 10, 20, 30];
const RTF_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 1.5, 2, 4];

export function duplexFamilies(d: DuplexSource): Family[] {
  return [
    counter('duplex_bench_packets_sent_total', 'Audio packets sent by the client, every session', () => d.packets().sent),
    counter('duplex_bench_packets_late_total', 'Packets whose send started more than one packet interval off its absolute deadline (the client missed its cadence)', () => d.packets().late),
    hdrHistogram('duplex_bench_pacing_deviation_seconds', 'Per packet: |send start - absolute deadline|, client clock', DEVIATION_BUCKETS_S, () => d.deviation),
    counter('duplex_bench_sessions_started_total', 'Sessions whose input stream started (packet 0 sent)', () => d.streams().started),
    gauge('duplex_bench_sessions_active', 'Sessions streaming input now', () => d.streams().active),
    counter('duplex_bench_sessions_completed_total', 'Sessions that ended complete', () => d.sessions.completed),
    counter('duplex_bench_sessions_incomplete_total', 'Sessions that ended incomplete, by reason', () =>
      [...d.sessions.incomplete].map(([reason, value]) => ({ value, labels: { reason } })),
    ),
    hdrHistogram(
      'duplex_bench_response_ttft_seconds',
      'Per model response: response.created received to the first non-empty text delta received (client clock)',
      LATENCY_BUCKETS_S,
      () => d.responses.ttft,
    ),
    hdrHistogram('duplex_bench_response_ttfp_seconds', 'Per model response: response.created received to the first audio delta received (client clock)', LATENCY_BUCKETS_S, () => d.responses.ttfp),
    hdrHistogram(
      'duplex_bench_response_rtf',
      'Per model response: receive span of its audio over the audio duration (ratio; under 1 is faster than real time)',
      RTF_BUCKETS,
      () => d.responses.rtf,
    ),
    ...(d.behaviour ? behaviourFamilies(d.behaviour) : []),
  ];
}

const BEHAVIOUR_BUCKETS_S = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 4, 5, 7.5, 10];

function behaviourFamilies(b: () => LiveBehaviour | null): Family[] {
  const when = ' (a conversation: set when the run ends, from the speech the VAD found in the received audio)';
  const n = (k: 'pauses' | 'takeovers' | 'backchannels' | 'yields') => () => b()?.[k] ?? 0;
  return [
    hdrHistogram('duplex_bench_behaviour_response_latency_seconds', `Per user turn end: the end of the user's speech to the start of the model's${when}`, BEHAVIOUR_BUCKETS_S, () => b()?.response ?? null),
    hdrHistogram('duplex_bench_behaviour_stop_latency_seconds', `Per barge-in: the user's speech start to the end of the model's speech${when}`, BEHAVIOUR_BUCKETS_S, () => b()?.stop ?? null),
    hdrHistogram('duplex_bench_behaviour_cancel_latency_seconds', `Per barge-in: the user's speech start to the server ending that response as cancelled or interrupted${when}`, BEHAVIOUR_BUCKETS_S, () => b()?.cancel ?? null),
    counter('duplex_bench_behaviour_pauses_total', `User pauses played${when}`, n('pauses')),
    counter('duplex_bench_behaviour_takeovers_total', `Pauses in which the model took the turn${when}`, n('takeovers')),
    counter('duplex_bench_behaviour_backchannels_total', `Backchannels played during the model's speech${when}`, n('backchannels')),
    counter('duplex_bench_behaviour_yields_total', `Backchannels after which the model stopped${when}`, n('yields')),
  ];
}

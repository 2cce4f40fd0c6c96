import type { RunIo } from '@duplex-bench/cli';
import { recordSessions, verdictLine, type RecordHooks, type RecordOptions, type RenderRecording, renderArrivals, renderBehaviour, renderDuplex } from '@duplex-bench/run';
import { monotonicClock, type Clock } from '@duplex-bench/pacer';

export type { RecordHooks } from '@duplex-bench/run';

/** A recording's lines: a directory already complete, or what this invocation recorded, the verdict last. */
export const RECORD_LINES: RenderRecording = {
  nothingLeft: ({ dataset, stored, file }) =>
    [
      `samples: ${dataset} in the dataset, all already complete; nothing recorded, nothing rewritten`,
      ...(stored?.behaviour ? renderBehaviour(stored.behaviour) : []),
      ...(stored ? [`${stored.qualified ? 'QUALIFIED' : 'UNQUALIFIED'}: as stored in ${file}`] : []),
    ].join('\n'),
  recorded: (n, summary, v) => {
    const d = summary.pacing_deviation_ms;
    return [
      `samples: ${n.dataset} in the dataset, ${n.skipped} already done, ${n.recorded} recorded now, ${n.completed} completed; ${summary.sessions.completed} of ${n.dataset} stored complete`,
      `packets of the stored samples: ${summary.packets.sent} sent, ${summary.packets.late} late; |deviation| p99 ${d.p99 ?? '-'} ms, max ${d.max ?? '-'} ms; sessions with a violation ${summary.sessions.with_violation}`,
      `client loop lag max ${summary.event_loop_lag_ms.max ?? '-'} ms (over 80 ms: ${summary.event_loop_lag_ms.over_80ms}); recorder CPU ${summary.cpu_cores.total} cores${summary.cpu_us_per_packet ? ` (${summary.cpu_us_per_packet.toFixed(1)} µs per packet cycle)` : ''}`,
      ...(summary.arrivals ? renderArrivals(summary.arrivals) : []),
      ...(summary.duplex ? renderDuplex(summary.duplex) : ['responses: none']),
      ...(summary.behaviour ? renderBehaviour(summary.behaviour) : []),
      verdictLine(v, {
        interrupted: 'partial recording; run again into the same directory to finish it',
        qualified: 'every packet within one packet interval',
        unqualified: 'late packets; the recording measured the client, not only the server',
      }),
    ].join('\n');
  },
};

/**
 * `probe record`: every sample of the dataset (or `--per-subset` sessions of a conversation) as one
 * session, resumable; its lines rendered for a person. Returns the exit status.
 */
export function recordCommand(options: RecordOptions, io: RunIo, clock: Clock = monotonicClock, hooks: RecordHooks = {}): Promise<number> {
  return recordSessions(options, io, RECORD_LINES, clock, hooks);
}

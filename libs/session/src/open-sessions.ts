import { rm } from 'node:fs/promises';
import { pcmPackets, readWavPcm16, silencePackets, type PacketSource } from '@duplex-bench/audio';
import type { RealtimeSession, SessionResult } from './realtime-session';

/** The packets every session of a run streams: `duration_s` of a WAV file's audio, or of silence. */
export async function runPackets(opts: { audio?: string; duration_s: number; packet_ms: number; sample_rate: number }): Promise<PacketSource> {
  if (!opts.audio) return silencePackets(opts.duration_s, opts.packet_ms, opts.sample_rate);
  const pcm = await readWavPcm16(opts.audio, opts.sample_rate);
  const bytes = Math.min(pcm.length, Math.round(opts.duration_s * opts.sample_rate) * 2);
  return pcmPackets(pcm.subarray(0, bytes), opts.packet_ms, opts.sample_rate);
}

/** Opens sessions `parallel` at a time; returns those that opened and the results of those that did not. */
export async function openAll(sessions: RealtimeSession[], parallel: number, stopped: () => boolean) {
  const opened: RealtimeSession[] = [];
  const failed: Array<Promise<SessionResult>> = [];
  let next = 0;
  async function worker() {
    while (next < sessions.length) {
      const session = sessions[next++];
      if (stopped()) {
        failed.push(session.abandon(new Error('interrupted before the start')).then((r) => ({ ...r, reason: 'interrupted' })));
        continue;
      }
      try {
        await session.open();
        opened.push(session);
      } catch (err) {
        failed.push(session.abandon(err));
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, sessions.length) }, worker));
  return { opened, failed };
}

/** Deletes a summarised trace; one that is not there (the session never wrote) is fine, anything else is said. */
export async function removeTrace(path: string, warn: (line: string) => void): Promise<void> {
  try {
    await rm(path, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTDIR') warn(`warning: cannot delete ${path}: ${(err as Error).message}`);
  }
}

/** Every session's outcome in brief (`sessions.json`): the per-session table of a report; response records stay in duplex_metrics.json. */
export function sessionsFile(results: SessionResult[]): { sessions: Array<Omit<SessionResult, 'responses' | 'response_metrics'>> } {
  return { sessions: results.map(({ responses: _r, response_metrics: _m, ...brief }) => brief) };
}


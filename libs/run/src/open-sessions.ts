import { rm } from 'node:fs/promises';
import { pcmPackets, readWavAs, silencePackets, type PacketSource, type WavConversion } from '@duplex-bench/audio';
import { reasonOf, type RealtimeSession, type SessionResult } from '@duplex-bench/session';

/** What run.json records of `--audio`: the file, and what was done to make it the session's input (mixed to mono, resampled). */
export interface AudioInputRecord {
  file: string;
  conversion: WavConversion;
}

/**
 * The packets every session of a run streams: `duration_s` of a WAV file's audio (any PCM or float
 * WAV, mixed to mono and resampled to the input rate on load), or of silence.
 */
export async function runPackets(opts: { audio?: string; duration_s: number; packet_ms: number; sample_rate: number }): Promise<{ packets: PacketSource; audio: AudioInputRecord | null }> {
  if (!opts.audio) return { packets: silencePackets(opts.duration_s, opts.packet_ms, opts.sample_rate), audio: null };
  const { pcm, conversion } = await readWavAs(opts.audio, opts.sample_rate);
  const bytes = Math.min(pcm.length, Math.round(opts.duration_s * opts.sample_rate) * 2);
  return { packets: pcmPackets(pcm.subarray(0, bytes), opts.packet_ms, opts.sample_rate), audio: { file: opts.audio, conversion } };
}

/**
 * Each arriving session's own packets, made when it arrives: `duration_s` of the WAV's audio (read
 * and converted once), or of silence.
 */
export async function arrivalPackets(opts: { audio?: string; packet_ms: number; sample_rate: number }): Promise<{ packetsFor: (duration_s: number) => PacketSource; audio: AudioInputRecord | null }> {
  if (!opts.audio) return { packetsFor: (duration_s) => silencePackets(duration_s, opts.packet_ms, opts.sample_rate), audio: null };
  const { pcm, conversion } = await readWavAs(opts.audio, opts.sample_rate);
  const cut = (duration_s: number) => pcm.subarray(0, Math.min(pcm.length, Math.round(duration_s * opts.sample_rate) * 2));
  return { packetsFor: (duration_s) => pcmPackets(cut(duration_s), opts.packet_ms, opts.sample_rate), audio: { file: opts.audio, conversion } };
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

/**
 * Opens the first session alone, then the rest `parallel` at a time. A first session that cannot
 * reach the server at all ends the run before the others try (`unreachable` says why); one that
 * connects but fails its handshake is one incomplete session like any other. A full server's
 * refusal of the first session proves it reachable: the others start then, while the first waits
 * out its admission backoff beside them (one after the other, a server that refused every session
 * held a vLLM-Omni run for two budgets, 86 s).
 */
export async function openFirstThenAll(sessions: RealtimeSession[], parallel: number, stopped: () => boolean) {
  let refused: () => void = () => undefined;
  const reached = new Promise<'refused'>((resolve) => (refused = () => resolve('refused')));
  const first = sessions[0].open({ refused }).then(
    () => ({ err: null as unknown, ok: true }),
    (err: unknown) => ({ err, ok: false }),
  );
  const early = await Promise.race([first, reached]);
  if (early !== 'refused' && !early.ok) {
    const { reason, message } = reasonOf(early.err);
    // An unreachable server, or one that cannot take the run's input, fails the run before the others try.
    if (reason === 'connect_failed' || reason === 'connect_timeout' || reason === 'input_not_granted') return { opened: [], failed: [sessions[0].abandon(early.err)], unreachable: message };
  }
  const rest = openAll(sessions.slice(1), parallel, stopped);
  const outcome = await first;
  const firstFailed = outcome.ok ? null : await sessions[0].abandon(outcome.err);
  const { opened, failed } = await rest;
  if (firstFailed) failed.unshift(Promise.resolve(firstFailed));
  else opened.unshift(sessions[0]);
  return { opened, failed, unreachable: null };
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

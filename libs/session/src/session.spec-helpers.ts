// Sessions in virtual time: a fake server scripted by the spec, every clock, bound and tick on one
// VirtualTime, and a trace sink that keeps its records in memory.
import { ReplaySubject } from 'rxjs';
import { silencePackets, type PacketSource } from '@duplex-bench/audio';
import { PacingRecorder, SampleStore, UnitLagRecorder } from '@duplex-bench/metrics';
import { DeadlineScheduler } from '@duplex-bench/pacer';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import { FakeServer, type FakeServerSide, type FakeUpgrade } from '@duplex-bench/transport/testing';
import type { DialectConfig } from '@duplex-bench/transport';
import type { AdmissionRefusal, ReceiptTimes, SessionTraceSink } from '@duplex-bench/tracer';
import type { SessionContext } from './context';
import { RealtimeSession } from './realtime-session';
import type { SessionResult } from './result';
import { nativeServer, type NativeScript } from './native-server.spec-helpers';
import { openaiServer, type OpenAIScript } from './openai-server.spec-helpers';

/** What a session wrote to its trace, kept in order. */
export class MemorySink implements SessionTraceSink {
  readonly tracesFrames = true;
  readonly sentLines: Array<{ event: Record<string, unknown>; time_s: number }> = [];
  readonly receivedLines: Array<{ event: Record<string, unknown>; time_s: number }> = [];
  readonly receipts: ReceiptTimes[] = [];
  readonly errors: string[] = [];
  readonly admissions: Array<{ attempt: number; refusal: AdmissionRefusal }> = [];
  closed = false;
  /** Makes close() reject, as a failed trace write does. */
  failClose: Error | null = null;

  private static parse(frame: string | Uint8Array): Record<string, unknown> {
    return JSON.parse(typeof frame === 'string' ? frame : Buffer.from(frame).toString('utf8')) as Record<string, unknown>;
  }
  /** The types of the frames sent, appends among them, in order. */
  sentTypes(): string[] {
    return this.sentLines.map((l) => String(l.event.type));
  }
  sent(frame: string | Uint8Array, time_s: number): void {
    this.sentLines.push({ event: MemorySink.parse(frame), time_s });
  }
  received(frame: string | Uint8Array, time_s: number): void {
    this.receivedLines.push({ event: MemorySink.parse(frame), time_s });
  }
  receipt(r: ReceiptTimes): void {
    this.receipts.push({ ...r });
  }
  error(message: string): void {
    this.errors.push(message);
  }
  admission(attempt: number, refusal: AdmissionRefusal): void {
    this.admissions.push({ attempt, refusal });
  }
  close(): Promise<void> {
    this.closed = true;
    return this.failClose ? Promise.reject(this.failClose) : Promise.resolve();
  }
}

export interface VirtualRun {
  time: VirtualTime;
  server: FakeServer;
  ctx: SessionContext;
  sink: MemorySink;
  session: RealtimeSession;
  /** Opens the session and streams it from `start_after_ms` after the open; resolves with its result (never rejects), once the frames in flight have landed. */
  result(start_after_ms?: number): Promise<SessionResult>;
}

export interface VirtualOptions {
  dialect: DialectConfig;
  /** How each upgrade is answered (default: every one accepted by `accept`). */
  answer?: (n: number) => FakeUpgrade;
  accept?: (side: FakeServerSide) => void;
  packets?: PacketSource;
  /** Seconds of silence to stream when `packets` is not given (80 ms packets at 16 kHz). */
  input_s?: number;
  ctx?: Partial<SessionContext>;
}

/** One session against a fake server, all in virtual time. */
export function virtualSession(o: VirtualOptions): VirtualRun {
  const time = new VirtualTime();
  const accept = o.accept ?? (() => undefined);
  const server = new FakeServer(time, o.answer ?? (() => ({ accept })));
  const packets = o.packets ?? silencePackets(o.input_s ?? 0.8, 80);
  const ctx: SessionContext = {
    url: 'ws://fake/v1/realtime',
    dialect: o.dialect,
    clock: time,
    timers: time,
    connect: server.connect,
    scheduler: new DeadlineScheduler({ host: time }),
    packets,
    pacing: new PacingRecorder(packets.packet_ms),
    samples: new SampleStore(packets.packet_ms),
    connect_timeout_ms: 10_000,
    handshake_timeout_ms: 10_000,
    drain_timeout_ms: 30_000,
    close_timeout_ms: 5_000,
    output_sample_rate: 24_000,
    unknownEvents: new Map(),
    stop$: new ReplaySubject<void>(1),
    onStreamStart: () => undefined,
    onStreamEnd: () => undefined,
    units: new UnitLagRecorder(),
    ...o.ctx,
  };
  const sink = new MemorySink();
  const session = new RealtimeSession('s0', ctx, sink, packets);
  const result = async (start_after_ms = 0): Promise<SessionResult> => {
    const run = (async () => {
      try {
        await session.open();
      } catch (err) {
        return session.abandon(err);
      }
      return session.stream(time.now_s() + start_after_ms / 1000);
    })();
    const result = await time.run(run);
    // What the client sent last (a farewell before its close frame) still reaches the server.
    await time.advance(0);
    return result;
  };
  return { time, server, ctx, sink, session, result };
}

/** The events of `type` a server side received. */
export function receivedOf(side: FakeServerSide, type: string): Array<Record<string, unknown>> {
  return side.received.filter((e) => e.type === type);
}

export const OPENAI = { protocol: 'openai', turn_detection: 'none', commit_every_packets: 5 } as const;
export const VLLM = { protocol: 'vllm-omni', turn_detection: 'none', commit_every_packets: 5, ack_every_ms: 250 } as const;

/** A native session of `input_s` seconds against the scripted native server. */
export function native(script: NativeScript = {}, input_s = 0.8): VirtualRun {
  return virtualSession({ dialect: { protocol: 'native' }, input_s, accept: (side) => nativeServer(side, script) });
}

/** An openai session (a commit and a response every 5 packets) against the scripted openai server. */
export function openai(script: OpenAIScript = {}, input_s = 0.8): VirtualRun {
  return virtualSession({ dialect: OPENAI, input_s, accept: (side) => openaiServer(side, script) });
}

/** A vllm-omni session (a commit every 5 packets, acks every 250 ms) against the scripted vLLM-Omni server. */
export function vllm(script: OpenAIScript = {}, input_s = 0.8): VirtualRun {
  return virtualSession({ dialect: VLLM, input_s, accept: (side) => openaiServer(side, { vllm: true, ...script }) });
}

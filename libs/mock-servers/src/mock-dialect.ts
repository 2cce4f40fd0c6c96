import type { LeadingSilence } from './leading-silence';
import type WebSocket from 'ws';
import type { BehaviourSettings } from './behaviour-session';
import type { ModelOptions } from './model-session';
import type { MockFault } from './mock-fault';

/** What every dialect of the mock works from: the profile resolved to its unit, rates and model timings. */
export interface MockSettings {
  /** Events sent back per input unit by append-echo. */
  replies_per_append: number;
  input_sample_rate: number;
  output_sample_rate: number;
  unit_ms: number;
  /** One output unit of silence, base64, built once. */
  output_payload: string;
  /** The model profile's timings; null for append-echo. */
  model: ModelOptions | null;
  /** `leading_silence_ms`: each response's audio, silence then a tone; null: silence throughout. */
  leading: LeadingSilence | null;
  /** Behaviour mode's knobs, script and answer audio; null when no knob was given. */
  behaviour: BehaviourSettings | null;
}

/** A session's socket as its dialect takes it: where its messages go, and what its close does. */
export interface MockConnection {
  readonly session: { onMessage(data: Buffer, isBinary: boolean, arrived_s: number): void };
  /** Called once the host has wired the socket: the server's opening events, if it speaks first. */
  start(): void;
  /** The socket closed with `code` (after the host counted it). */
  closed(code: number): void;
}

/** One dialect of the mock: how it takes a new session, and what it holds beyond its sessions. */
export interface MockDialect {
  /** A full server refuses the upgrade with HTTP 503 (vLLM-Omni instead answers the opening session.update with an error). */
  readonly refuses_upgrade_when_full: boolean;
  /** A new session `id` on `ws`; `fault` when it is to misbehave. */
  open(ws: WebSocket, id: string, fault: MockFault | null): MockConnection;
  /** Shutdown: cancels the dialect's own timers. */
  close(): void;
}

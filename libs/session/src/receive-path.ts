import type { Subscription } from 'rxjs';
import type { ModelPlayout, VoiceSession } from '@duplex-bench/audio';
import type { ProtocolError, ResponseEvent } from '@duplex-bench/protocol';
import type { Connection, SessionFlow } from '@duplex-bench/transport';
import { traceReceived, type SessionTraceSink } from '@duplex-bench/tracer';
import { countUnknownTypes } from './receive/count-unknown';
import { hearModel } from './receive/hear-model';
import { readFrames } from './receive/read-frames';
import { trackResponses, type AudibleWatch } from './receive/track-responses';
import { trackUnits } from './receive/track-units';
import { watchServerErrors } from './receive/watch-server-errors';

export interface ReceivePath {
  conn: Connection;
  sink: SessionTraceSink;
  /** Received types the dialect does not define, counted by type (the process's). */
  unknownEvents: Map<string, number>;
  flow(): SessionFlow;
  /** Whether the response figures have started (packet 0 went). */
  responsesStarted(): boolean;
  onResponse(e: ResponseEvent): void;
  /** Times each response's first audible audio (its deltas decoded until one is voiced). */
  audible?: AudibleWatch;
  onUnitDone(received_s: number): void;
  onServerError(error: ProtocolError): void;
  /** A conversation's: its playout, the voice activity thread, the output rate. */
  hear: { playout: ModelPlayout; voice: VoiceSession | null; output_rate(): number } | null;
  /** The connection broke (its events$ errored). */
  onBroken(err: Error): void;
}

/**
 * The path of one received frame: the socket (events$) → its trace line, as it arrived → what it
 * says of the model's responses → unit receipts (native) → server errors → unknown types counted →
 * with a conversation, the model's audio played out. With traces off nothing is written per frame:
 * the tracing operator is left out of the pipe.
 */
export function receivePath(p: ReceivePath): Subscription {
  const traced$ = p.sink.tracesFrames ? p.conn.events$.pipe(traceReceived(p.sink)) : p.conn.events$;
  const stages = [
    trackResponses(p.responsesStarted, p.onResponse, p.audible),
    trackUnits(p.onUnitDone),
    watchServerErrors(p.onServerError),
    countUnknownTypes(p.flow, p.unknownEvents),
  ];
  if (p.hear) stages.push(hearModel(p.hear.playout, p.hear.voice, p.hear.output_rate));
  return traced$.pipe(readFrames(...stages)).subscribe({ error: p.onBroken });
}

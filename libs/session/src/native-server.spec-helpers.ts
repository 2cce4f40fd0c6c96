// A native (sglang-omni duplex) server scripted for virtual-time specs: the contract's happy path
// (DESIGN "Wire dialects", native), with the faults a spec names.
import type { FakeServerSide } from '@duplex-bench/transport/testing';

export interface NativeScript {
  unit_ms?: number;
  output_rate?: number;
  /** Server ms before each `sglang.unit.done` is sent, after its input is complete. */
  unit_lag_ms?: number;
  /** After this many appends: an error event (`fatal` or not), a close of the socket, a binary frame, or a malformed one. */
  fault?: { after_appends: number; kind: 'error' | 'fatal_error' | 'close' | 'drop' | 'binary' | 'malformed' | 'non_finite' };
  /** Closes the socket when `session.update` arrives, before `session.updated`. */
  close_in_handshake?: boolean;
  /** Never answers `sglang.input_audio.end` (the drain bound runs out). */
  no_drain?: boolean;
  /** Never answers `session.close` (the close bound runs out). */
  no_closed?: boolean;
  /** Sends this event type, which the dialect does not define, after the grant. */
  unknown_type?: string;
  /** The seqs of the receipts answering append `seq` (default: `[seq]`): a faulty server's repeats and skips. */
  receipts?: (seq: number) => number[];
}

/** Plays a native server on `side` (accepted): grant, acks, units, one response, drain and close. */
export function nativeServer(side: FakeServerSide, o: NativeScript = {}): void {
  const unit_ms = o.unit_ms ?? 80;
  const rate = o.output_rate ?? 22_050;
  let n = 0;
  let bytes = 0;
  let units = 0;
  let responded = false;
  const id = (k: string) => `evt_${k}${n++}`;
  side.send({ type: 'session.created', event_id: id('c'), session: { id: 'sess_1' } });
  const unitsDone = (input_ms: number, final: boolean) => {
    const whole = final ? Math.ceil(input_ms / unit_ms) : Math.floor(input_ms / unit_ms);
    for (; units < whole; units++) {
      const start = units * unit_ms;
      const sglang = { unit_id: `unit_${units}`, chunk_seq: units, media_time: { t_start_ms: start, duration_ms: Math.min(unit_ms, input_ms - start) } };
      side.send({ type: 'sglang.unit.done', event_id: id('u'), unit_id: `unit_${units}`, sglang }, o.unit_lag_ms ?? 0);
    }
  };
  let appends = 0;
  side.onMessage((e) => {
    const client_event_id = e.event_id;
    switch (e.type) {
      case 'session.update':
        if (o.close_in_handshake) {
          side.close(1000, 'bye');
          return;
        }
        side.send({
          type: 'session.updated',
          event_id: id('u'),
          client_event_id,
          session: { id: 'sess_1', sglang: { granted: { native_unit_ms: unit_ms, first_unit_ms: unit_ms, output_audio_format: { type: 'audio/pcm', rate } } } },
        });
        if (o.unknown_type) side.send({ type: o.unknown_type, event_id: id('x') });
        break;
      case 'input_audio_buffer.append': {
        appends++;
        if (o.fault && appends > o.fault.after_appends) return;
        bytes += Buffer.from(String(e.audio), 'base64').length;
        const seq = (e.sglang as { seq: number }).seq;
        for (const receipt of o.receipts?.(seq) ?? [seq]) side.send({ type: 'sglang.input_audio.accepted', event_id: id('a'), seq: receipt, accepted_end_ms: bytes / 32, client_event_id });
        if (!responded) {
          responded = true;
          side.send({ type: 'response.created', event_id: id('r'), response: { id: 'resp_1', status: 'in_progress' } });
        }
        side.send({ type: 'response.output_audio.delta', event_id: id('d'), response_id: 'resp_1', item_id: 'item_1', output_index: 0, content_index: 0, delta: Buffer.alloc((rate / 1000) * 2 * 80).toString('base64') });
        unitsDone(bytes / 32, false);
        if (o.fault && appends === o.fault.after_appends) fault(side, o.fault.kind, id);
        break;
      }
      case 'sglang.input_audio.end':
        if (o.no_drain) return;
        side.send({ type: 'sglang.input_audio.ended', event_id: id('e'), accepted_end_ms: bytes / 32, tail_policy: 'pad', client_event_id });
        unitsDone(bytes / 32, true);
        side.send({ type: 'response.output_audio.done', event_id: id('o'), response_id: 'resp_1' });
        side.send({ type: 'response.done', event_id: id('r'), response: { id: 'resp_1', status: 'completed', status_details: { reason: 'stop' } } });
        side.send({ type: 'sglang.input_audio.drained', event_id: id('n'), accepted_end_ms: bytes / 32, consumed_ms: bytes / 32, discarded_ms: 0, padding_ms: 0, client_event_id });
        break;
      case 'session.close':
        if (o.no_closed) return;
        side.send({ type: 'session.closed', event_id: id('z'), reason: 'client_closed', client_event_id });
        break;
      default:
        break;
    }
  });
}

function fault(side: FakeServerSide, kind: NonNullable<NativeScript['fault']>['kind'], id: (k: string) => string): void {
  if (kind === 'close') side.close(1011, 'gone');
  else if (kind === 'drop') side.drop();
  else if (kind === 'non_finite') side.send('{"type":"sglang.input_audio.accepted","seq":9,"accepted_end_ms":1e999}');
  else if (kind === 'binary') side.sendBinary(Buffer.from([1, 2, 3]));
  else if (kind === 'malformed') side.send('{"type": "response.output_audio.delta", ');
  else side.send({ type: 'error', event_id: id('f'), error: { type: 'server_error', code: 'engine_failed', message: 'boom' }, sglang: { fatal: kind === 'fatal_error' } });
}

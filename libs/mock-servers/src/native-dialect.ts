import { nativeGrant, type NativeLimits } from '@duplex-bench/protocol';
import type { MockServerOptions } from './mock-options';
import type { MockStatsRecorder } from './mock-stats';
import type { MockDialect, MockSettings } from './mock-dialect';
import { NativeMockSession, type NativeMockOptions } from './native-mock-session';
import type { MockHost } from './openai-mock-session';

/**
 * sglang-omni's runtime defaults (`RuntimeLimits`, types.py@dd3240eb). The input bound is on input
 * held unprocessed (60 s of 16 kHz PCM16), which the model mock enforces: a server that falls that
 * far behind refuses appends as `buffer_overflow`. The output bounds are on output not yet sent; the
 * mock states them and never queues that much.
 */
const MOCK_LIMITS: NativeLimits = {
  max_input_bytes: 60 * 16_000 * 2,
  max_output_bytes: 4 * 1024 * 1024,
  max_output_events: 256,
  max_history_chars: 64 * 1024,
  cleanup_timeout_s: 30,
};

export const NATIVE_ARRIVAL_ORIGIN = "per session: mock message-handler time of packet N minus its t_start_ms, minus the session's smallest such offset; monotonic clock";

/** The native dialect (sglang-omni duplex): one grant for every session, append-echo or a native model profile. */
export function nativeDialect(settings: MockSettings, host: MockHost, stats?: MockStatsRecorder, images?: MockServerOptions['images']): MockDialect {
  const grant = nativeGrant(settings.output_sample_rate, settings.unit_ms, MOCK_LIMITS);
  if (images) {
    const per_unit = images.max_per_unit ?? 1;
    // As sglang-omni's grant states it; older clients read max_per_unit, newer max_frames_per_unit.
    grant.input_modalities = ['audio', 'image'];
    grant.input_image_format = { types: ['image/jpeg'], max_bytes: images.max_bytes ?? 512 * 1024, max_frames_per_unit: per_unit, max_per_unit: per_unit, max_slice_nums: 9 };
  }
  const options: NativeMockOptions = {
    grant,
    frame_cost_ms: images?.frame_cost_ms ?? 0,
    replies_per_unit: settings.replies_per_append,
    model: settings.model,
    leading: settings.leading,
    behaviour: settings.behaviour,
  };
  return {
    refuses_upgrade_when_full: true,
    open: (ws, id, fault) => {
      const session = new NativeMockSession(ws, host, id, options, settings.output_payload, fault);
      return {
        session,
        start: () => session.start(),
        closed: () => {
          stats?.frames(session.frames);
          session.dispose();
        },
      };
    },
    close: () => undefined,
  };
}

import type { MockDialect, MockSettings } from './mock-dialect';
import type { MockServerOptions } from './mock-options';
import { OpenAIMockSession, type MockHost, type OpenAIMockOptions } from './openai-mock-session';

/** The arrival deviation of the openai dialect and its vllm-omni flavour, for `measurement_origin`. */
export const OPENAI_ARRIVAL_ORIGIN =
  "per session: mock message-handler time of append N minus the audio before N (ms at the input rate), minus the session's smallest such offset; monotonic clock";

/** The OpenAI Realtime dialect: the server speaks first; a session that closes with 1000 is completed. */
export function openaiDialect(settings: MockSettings, options: MockServerOptions, host: MockHost): MockDialect {
  const openai: OpenAIMockOptions = {
    names: options.openai?.names ?? 'ga',
    vllm: options.openai?.vllm ?? false,
    silence_ms: options.openai?.silence_ms ?? 500,
    input_sample_rate: settings.input_sample_rate,
    output_sample_rate: settings.output_sample_rate,
    unit_ms: settings.unit_ms,
    // append-echo answers each unit at once; the model profile keeps its latencies.
    model: settings.model ?? { ttfp_ms: 0, rtf: 0, burst_units: 1, turn_every_s: options.model?.turn_every_s ?? 5 },
    behaviour: settings.behaviour,
    leading: settings.leading,
  };
  return {
    refuses_upgrade_when_full: true,
    open: (ws, id, fault) => {
      const session = new OpenAIMockSession(ws, host, id, openai, settings.output_payload, fault);
      return {
        session,
        start: () => session.start(),
        closed: (code) => {
          if (code === 1000) host.completed();
          session.dispose();
        },
      };
    },
    close: () => undefined,
  };
}

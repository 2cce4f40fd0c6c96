import type { CliCommand } from '@duplex-bench/cli';
import { SERVE_FLAGS } from './serve-options';

/** `serve`: its flags for `--help` and parsing; the servers' code loads when it runs. */
export const SERVE_COMMAND: CliCommand = {
  name: 'serve',
  summary: 'a mock realtime server (native, openai or vLLM-Omni flavour), an OpenAI-compatible SSE stub (http), or a reference clock (time), until SIGINT or SIGTERM',
  usage: '[--protocol native|openai|http|time] [--profile NAME | --stub KIND] [--port PORT] [flags]',
  flags: SERVE_FLAGS,
  run: async (argv, io) => (await import('./serve-command')).serveCommand(argv, io),
};

import { type CliCommand } from '@duplex-bench/cli';
import { CHECK_FLAGS } from './check/check-flags';
import { HTTP_FLAGS } from './http/http-flags';
import { K8S_FLAGS } from './k8s/k8s-flags';
import { MERGE_FLAGS } from './merge/merge-flags';
import { RECORD_FLAGS } from './record/record-flags';
import { REPORT_FLAGS } from './report/report-flags';
import { withReport } from './report/with-report';
import { withDashboardPage } from './dashboard-page';
import { RUN_FLAGS } from './run/run-flags';
import { COMPARE_FLAGS } from './sweep/compare-flags';
import { SWEEP_FLAGS } from './sweep/sweep-flags';

/**
 * The probe's commands: the flags for `--help` and parsing, and what runs each. A command's code
 * (and the npm packages it calls) loads when that command runs: `--version`, `--help` and every
 * other command load none of it.
 */
export const PROBE_COMMANDS: CliCommand[] = [
  withDashboardPage(withReport({
    name: 'run',
    summary: 'stream --concurrency sessions of --duration seconds at an absolute cadence and check every packet',
    usage: '--url ws://HOST:PORT/v1/realtime --concurrency N --duration S --output DIR [flags]',
    flags: RUN_FLAGS,
    json: true,
    run: async (argv, io) => (await import('./run/run-main')).runMain(argv, io),
  })),
  withDashboardPage(withReport({
    name: 'record',
    summary: 'record every sample of a dataset as one session each, resumable, with response figures and post-processing',
    usage: '--url URL --concurrency N --output DIR [flags]',
    flags: RECORD_FLAGS,
    json: true,
    run: async (argv, io) => (await import('./record/record-main')).recordMain(argv, io),
  })),
  withReport({
    name: 'merge',
    summary: 'pool the runs of several processes of one host into one summary (percentiles from merged histograms)',
    usage: 'RUN_DIR... --output DIR',
    flags: MERGE_FLAGS,
    json: true,
    run: async (argv, io) => (await import('./merge/merge-command')).mergeCommand(argv, io),
  }),
  {
    name: 'check',
    summary: "grade native traces against sglang-omni's duplex contract, by the profile each grant states",
    usage: 'DIR|TRACE.jsonl [--profile nemotron|minicpmo] [--output FILE]',
    flags: CHECK_FLAGS,
    json: true,
    run: async (argv, io) => {
      const { checkCommand, parseCheckOptions } = await import('./check/check-command');
      return checkCommand(parseCheckOptions(argv), io);
    },
  },
  {
    name: 'report',
    summary: 'one self-contained HTML page of a run, recording, merged run or sweep: verdict, pacing over time, the client loop, responses, sessions; a sweep: its capacity curve',
    usage: 'DIR [--output FILE] [--mock-stats FILE]',
    flags: REPORT_FLAGS,
    run: async (argv, io) => (await import('./report/report-command')).reportCommand(argv, io),
  },
  withReport({
    name: 'sweep',
    summary: 'find how many sessions a server holds: runs at doubling, then bisected, session counts until an SLO fails, never blaming the server for a client that fell behind',
    usage: '--url URL --output DIR [--sessions MIN:MAX] [--runs N] [--duration S] [--slo TERMS] [flags]',
    flags: SWEEP_FLAGS,
    json: true,
    run: async (argv, io) => (await import('./sweep/sweep-command')).sweepCommand(argv, io),
  }),
  {
    name: 'compare',
    summary: 'A/B: runs two arms interleaved in random order, fresh processes, and says which is better only where a bootstrap interval excludes 1',
    usage: "--arm A='run flags' --arm B='run flags' --output DIR [--reps N] [--metric NAMES]",
    flags: COMPARE_FLAGS,
    json: true,
    run: async (argv, io) => (await import('./sweep/compare-command')).compareCommand(argv, io),
  },
  withDashboardPage(withReport({
    name: 'http',
    summary: 'drive an OpenAI-compatible streaming endpoint (SSE), open or closed loop: TTFT, ITL, TPOT and E2E from each intended start',
    usage: '--url http://HOST:PORT (--rate R | --concurrency N) (--requests N | --duration S) --output DIR [flags]',
    flags: HTTP_FLAGS,
    json: true,
    run: async (argv, io) => (await import('./http/http-command')).httpCommand(argv, io),
  })),
  {
    name: 'k8s',
    summary: 'write Kubernetes manifests of a sharded run: an Indexed Job of --shards pods starting at one instant, and the Job that merges them',
    usage: "--shards N --image IMAGE --url URL --run-args '--concurrency N --duration S' [--output DIR]",
    flags: K8S_FLAGS,
    run: async (argv, io) => (await import('./k8s/k8s-command')).k8sCommand(argv, io),
  },
];

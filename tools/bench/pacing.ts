/**
 * Pacing benchmark: the probe and the Python baseline client, each against a fresh append-echo mock,
 * at several session counts, interleaved in the same sweep so all clients see the same machine.
 *
 *   node --import tsx tools/bench/pacing.ts [--sessions 64,256,512,1024] [--runs 3] [--duration 30] [--stamp-sends]
 *        [--clients probe,python] [--out out/bench] [--write-doc docs/performance.md] [--doc-section pacing]
 *        [--python PYTHON] [--python-client FILE] [--settle 2]
 *
 * Clients: probe (receipts only, --trace off), probe-openai (the same in the openai dialect, against
 * the openai mock), probe-full (the same plus --trace full: every event goes
 * to per-session trace files through the writer thread, deleted after the summary), python (baseline),
 * floor (tools/bench/ws-floor.ts: the least a Node client of the dialect does, the floor under the probe).
 * Writes <out>/results.json (host, command, one record per client run) and prints markdown tables.
 * --write-doc replaces the part of the file between <!-- bench:NAME:start --> and <!-- bench:NAME:end -->
 * (NAME from --doc-section), or appends that section when the markers are missing.
 * Every wait is bounded; only processes started here are signalled, by PID; all traffic is on 127.0.0.1.
 * Exit status: 0 all runs finished (qualified or not), 1 a run failed, 2 bad usage, 130 interrupted.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { commandLine, docSection, writeDoc } from './doc';
import { findPython, hostInfo, hostLine, type HostInfo } from './host';
import { pinBench } from './pins';
import { installInterrupts, liveChildren, signalChild } from './processes';
import { parseOptions, UsageError, type Options } from './pacing/options';
import { sweep, type RunResult } from './pacing/run-one';
import { round } from './pacing/format';
import { docTitle, report } from './pacing/tables';

function writeResults(options: Options, host: HostInfo, command: string, started_at: string, wall_s: number, results: RunResult[], aborted: boolean): void {
  const body = { host, command, started_at, wall_s: round(wall_s, 1), aborted, options, runs: results };
  fs.mkdirSync(options.out_dir, { recursive: true });
  fs.writeFileSync(path.join(options.out_dir, 'results.json'), `${JSON.stringify(body, null, 1)}\n`);
}

/** tools/bench/ws-floor.ts as one CommonJS file in the output directory: the floor client runs without tsx's load in its CPU. */
function buildFloor(out_dir: string): string {
  const outfile = path.join(out_dir, 'ws-floor.js');
  fs.mkdirSync(out_dir, { recursive: true });
  buildSync({ entryPoints: [path.join(__dirname, 'ws-floor.ts')], outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'error' });
  return outfile;
}

function checkPrerequisites(options: Options, host: HostInfo): void {
  if (options.clients.includes('python')) {
    if (!options.python_bin) throw new Error('no Python interpreter with websockets (apt-get install -y python3-websockets, or pass --python BIN)');
    if (!fs.existsSync(options.python_client)) throw new Error(`Python baseline client not found: ${options.python_client}`);
  }
  const needed_fds = Math.max(...options.sessions) + 64;
  if (host.open_files_limit !== undefined && host.open_files_limit < needed_fds) {
    process.stderr.write(`warning: open-files limit ${host.open_files_limit} is below ${needed_fds}; large runs may fail (ulimit -n)\n`);
  }
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (options.pins) pinBench(options.pins);
  if (options.clients.includes('python')) options.python_bin = findPython(options.python_bin);
  const host = hostInfo(options.python_bin);
  checkPrerequisites(options, host);
  if (options.clients.includes('floor')) options.floor_js = buildFloor(options.out_dir);
  const command = commandLine(['node', '--import', 'tsx', 'tools/bench/pacing.ts', ...argv]);
  const started_at = new Date().toISOString();
  const started_ns = process.hrtime.bigint();
  const state = { aborted: false };
  // SIGINT/SIGTERM: start no more runs and interrupt the running client by PID (its mock is then
  // stopped as usual); partial results are written.
  installInterrupts(() => {
    state.aborted = true;
    process.stderr.write('interrupted: stopping the current run\n');
    for (const [child, role] of liveChildren) if (role === 'client') signalChild(child, 'SIGINT');
  });
  process.stderr.write(`host: ${hostLine(host)}\n`);

  const results: RunResult[] = [];
  await sweep(options, state, results);
  const wall_s = Number(process.hrtime.bigint() - started_ns) / 1e9;
  writeResults(options, host, command, started_at, wall_s, results, state.aborted);

  const tables = report(options, results);
  process.stdout.write(`Host: ${hostLine(host)}\n\n${tables}\n\nresults: ${path.join(options.out_dir, 'results.json')} (${wall_s.toFixed(0)} s)\n`);
  if (options.write_doc && !state.aborted) {
    const section = docSection(options.doc_section, docTitle(options.clients), hostLine(host), command, started_at.slice(0, 10), tables);
    writeDoc(options.write_doc, options.doc_section, section);
    process.stderr.write(`updated ${options.write_doc}\n`);
  }
  if (state.aborted) return 130;
  return results.some((r) => r.status === 'failed') ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);

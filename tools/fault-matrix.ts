/**
 * The fault matrix: every dialect's mock (`serve --fault`) against the built kit's `run`, one cell
 * per dialect x fault, and what the probe made of it: the reason each session ended with, the run's
 * time to end, its peak RSS, its late packets and its exit status. Writes the table between the
 * fault-matrix markers of docs/reliability.md ("Faults, per dialect"), or prints it.
 *
 *   npm run build && node --import tsx tools/fault-matrix.ts [--out docs/reliability.md] [--only native,openai] [--faults duplicate_seq,…] [--cell-timeout-s 90]
 *
 * Every cell is bounded: the mock must say where it listens within 15 s, and the run must end
 * within --cell-timeout-s (default 90); past either both are killed by their PIDs and the cell says
 * so. Everything listens on 127.0.0.1, port 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { mockFaultsOf, type MockFault } from '../libs/mock-servers/src/mock-fault';

const ROOT = join(__dirname, '..');
const KIT = join(ROOT, 'bin', 'duplex-bench.js');
const SPEECH = join(ROOT, 'libs', 'audio', 'speech', 'q1.wav');
const START = '<!-- fault-matrix:start -->';
const END = '<!-- fault-matrix:end -->';
/** Appends a session takes before its mock misbehaves (--fault-after): 0.8 s in at 80 ms packets, mid-response. */
const FAULT_AFTER = 10;
const LISTEN_TIMEOUT_MS = 15_000;

type Dialect = 'native' | 'openai' | 'vllm-omni' | 'legacy';

/** How each dialect's mock is started, and how `run` talks to it. */
const DIALECTS: Record<Dialect, { serve: string[]; run: string[] }> = {
  native: { serve: [], run: [] },
  openai: { serve: ['--protocol', 'openai'], run: ['--protocol', 'openai'] },
  'vllm-omni': { serve: ['--protocol', 'openai', '--flavor', 'vllm-omni'], run: ['--protocol', 'vllm-omni', '--model', 'm', '--audio', SPEECH] },
  legacy: { serve: ['--profile', 'qwen3-omni-half-duplex'], run: ['--profile', 'qwen3-omni-half-duplex', '--audio', SPEECH] },
};

/** The faults of issue 47, in table order; each dialect runs those its mock has (mockFaultsOf). */
const FAULTS: Array<MockFault['action']> = [
  'malformed_frame',
  'binary_frame',
  'close',
  'fatal_error',
  'stop_answering',
  'stop_reading',
  'oversized_frame',
  'unknown_event_flood',
  'no_session_closed',
  'non_finite',
  'duplicate_seq',
  'refuse_admission',
];

interface Cell {
  dialect: Dialect;
  fault: string;
  reasons: string;
  /** Sessions that ended incomplete with no reason. */
  unreasoned: number;
  seconds: number;
  rss_mib: number | null;
  late: number | null;
  exit: string;
  hung: boolean;
}

/** Kills a child by its PID (SIGTERM, then SIGKILL 3 s on) and waits, bounded, for it to be gone. */
async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const hard = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  }, 3000);
  await Promise.race([gone, new Promise<void>((resolve) => setTimeout(resolve, 6000))]);
  clearTimeout(hard);
}

/** Starts `serve` with the fault; resolves with its URL once it says it listens (bounded). */
async function startMock(dialect: Dialect, fault: string | null): Promise<{ child: ChildProcess; url: string }> {
  const args = [KIT, 'serve', ...DIALECTS[dialect].serve, '--host', '127.0.0.1', '--port', '0', ...(fault ? ['--fault', fault, '--fault-after', String(FAULT_AFTER)] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve did not listen within ${LISTEN_TIMEOUT_MS} ms: ${err}`)), LISTEN_TIMEOUT_MS);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}: ${err}`));
    });
  }).catch(async (e: Error) => {
    await kill(child);
    throw e;
  });
  return { child, url };
}

/** Runs `run` against `url`, bounded by `timeout_ms`; resolves with its exit and wall time. */
function runProbe(dialect: Dialect, url: string, out: string, timeout_ms: number): Promise<{ exit: string; seconds: number; hung: boolean; stderr: string }> {
  const args = [KIT, 'run', '--url', url, ...DIALECTS[dialect].run, '--concurrency', '4', '--duration', '3', '--output', out, '--json', '--quiet'];
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  return new Promise((resolve) => {
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      void kill(child);
    }, timeout_ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      resolve({ exit: hung ? `killed at ${timeout_ms / 1000} s` : code !== null ? String(code) : String(signal), seconds, hung, stderr });
    });
  });
}

interface SummaryView {
  sessions?: { started?: number; completed?: number; incomplete?: number; incomplete_reasons?: Record<string, number> };
  packets?: { late?: number };
  peak_rss_bytes?: number;
  events?: { unknown?: Record<string, number>; dialect?: Record<string, number>; server_event_seq?: { gaps: number; not_rising: number } };
}

/** What the run noticed of a fault that ends no session: receipts or event numbers out of order, events the dialect does not define. */
function noticed(s: SummaryView | null): string[] {
  const e = s?.events;
  const said: string[] = [];
  const d = e?.dialect ?? {};
  if (d.receipt_seq_repeated) said.push(`receipt seq repeated ${d.receipt_seq_repeated}`);
  if (d.receipt_seq_skipped) said.push(`receipt seq skipped ${d.receipt_seq_skipped}`);
  if (e?.server_event_seq?.not_rising) said.push(`server_event_seq not rising ${e.server_event_seq.not_rising}`);
  if (e?.server_event_seq?.gaps) said.push(`server_event_seq gaps ${e.server_event_seq.gaps}`);
  const unknown = Object.values(e?.unknown ?? {}).reduce((a, b) => a + b, 0);
  if (unknown > 0) said.push(`unknown events ${unknown}`);
  return said;
}

async function runCell(dialect: Dialect, fault: string | null, timeout_ms: number): Promise<Cell> {
  const out = await mkdtemp(join(tmpdir(), 'fault-matrix-'));
  const name = fault ?? '(none)';
  let mock: { child: ChildProcess; url: string } | null = null;
  try {
    mock = await startMock(dialect, fault);
    const r = await runProbe(dialect, mock.url, join(out, 'run'), timeout_ms);
    let summary: SummaryView | null = null;
    try {
      summary = JSON.parse(await readFile(join(out, 'run', 'summary.json'), 'utf8')) as SummaryView;
    } catch {
      summary = null;
    }
    const s = summary?.sessions;
    const reasons = Object.entries(s?.incomplete_reasons ?? {}).map(([k, n]) => `${k} ${n}`);
    if (s?.completed) reasons.unshift(`complete ${s.completed}`);
    const unreasoned = s ? (s.incomplete ?? 0) - Object.values(s.incomplete_reasons ?? {}).reduce((a, b) => a + b, 0) : 0;
    if (unreasoned > 0) reasons.push(`**no reason ${unreasoned}**`);
    const seen = noticed(summary);
    if (seen.length > 0) reasons.push(`noticed: ${seen.join(', ')}`);
    const lastLine = r.stderr.trim().split('\n').at(-1) ?? '';
    return {
      dialect,
      fault: name,
      reasons: summary ? reasons.join(', ') || '-' : `no summary (${lastLine.replace(/\|/g, '/').slice(0, 120)})`,
      unreasoned,
      seconds: r.seconds,
      rss_mib: summary?.peak_rss_bytes !== undefined ? summary.peak_rss_bytes / 2 ** 20 : null,
      late: summary?.packets?.late ?? null,
      exit: r.exit,
      hung: r.hung,
    };
  } catch (err) {
    return { dialect, fault: name, reasons: `cell failed: ${(err as Error).message.split('\n')[0].slice(0, 120)}`, unreasoned: 0, seconds: 0, rss_mib: null, late: null, exit: '-', hung: false };
  } finally {
    if (mock) await kill(mock.child);
    await rm(out, { recursive: true, force: true });
  }
}

function table(cells: Cell[]): string {
  const rows = cells.map((c) => `| ${c.dialect} | ${c.fault} | ${c.reasons} | ${c.seconds.toFixed(1)} | ${c.rss_mib === null ? '-' : c.rss_mib.toFixed(0)} | ${c.late === null ? '-' : c.late > 0 ? `**${c.late}**` : '0'} | ${c.hung ? `**${c.exit}**` : c.exit} |`);
  return ['| dialect | fault | sessions ended (reason count) | seconds to end | peak RSS MiB | late packets | exit |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

function host(): string {
  const cpu = cpus();
  return `${cpu.length} cores (${cpu[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}, ${process.platform}`;
}

async function writeSection(path: string, block: string): Promise<void> {
  let text = await readFile(path, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start >= 0 && end > start) text = `${text.slice(0, start)}${block}${text.slice(end + END.length)}`;
  else text = `${text.trimEnd()}\n\n## Faults, per dialect\n\n${block}\n`;
  const temporary = `${path}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}

async function main(argv: string[]): Promise<void> {
  const flag = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const out = flag('--out');
  const only = flag('--only')?.split(',') as Dialect[] | undefined;
  // `--faults a,b`: only those faults (and no fault-free cell), to look at a few cells again.
  const picked = flag('--faults')?.split(',');
  const timeout_ms = Number(flag('--cell-timeout-s') ?? 90) * 1000;
  const dialects = (Object.keys(DIALECTS) as Dialect[]).filter((d) => !only || only.includes(d));
  const t0 = Date.now();
  const cells: Cell[] = [];
  for (const dialect of dialects) {
    const takes = mockFaultsOf(dialect);
    const faults = picked ? FAULTS.filter((f) => picked.includes(f) && takes.includes(f)) : [null, ...FAULTS.filter((f) => takes.includes(f))];
    for (const fault of faults) {
      const cell = await runCell(dialect, fault, timeout_ms);
      process.stderr.write(`${cell.dialect} ${cell.fault}: ${cell.reasons}; ${cell.seconds.toFixed(1)} s; late ${cell.late ?? '-'}; exit ${cell.exit}\n`);
      cells.push(cell);
    }
  }
  const minutes = ((Date.now() - t0) / 60_000).toFixed(1);
  const findings = cells.filter((c) => (c.late ?? 0) > 0 || c.unreasoned > 0 || c.hung).map((c) => `${c.dialect} ${c.fault}`);
  const block = [
    START,
    `Written by \`node --import tsx tools/fault-matrix.ts --out docs/reliability.md\` (after \`npm run build\`) on ${new Date().toISOString().slice(0, 10)}, ${minutes} min, on ${host()}.`,
    `Each cell: \`duplex-bench serve <dialect> --fault <fault> --fault-after ${FAULT_AFTER}\` (every session misbehaves from its ${FAULT_AFTER}th append on; \`(none)\` is the mock without a fault) and \`duplex-bench run --concurrency 4 --duration 3 --json --quiet\` against it (vllm-omni: \`--protocol vllm-omni --model m --audio q1.wav\`; legacy: \`--profile qwen3-omni-half-duplex --audio q1.wav\`), bounded by ${timeout_ms / 1000} s. Seconds to end: the run's wall time, process start to exit. What each fault does: libs/mock-servers/src/mock-fault.ts.`,
    '',
    table(cells),
    '',
    findings.length > 0 ? `Cells with a late packet, a session ended with no reason, or a run killed at its bound (in bold above): ${findings.join('; ')}.` : 'No cell has a late packet, a session ended with no reason, or a run killed at its bound.',
    END,
  ].join('\n');
  if (out) {
    await writeSection(out, block);
    process.stdout.write(`wrote ${out} (${cells.length} cells, ${minutes} min)\n`);
  } else process.stdout.write(`${block}\n`);
}

main(process.argv.slice(2)).catch((err: Error) => {
  process.stderr.write(`error: ${err.message}\n`);
  process.exit(1);
});

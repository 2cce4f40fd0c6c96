import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { parseAllDocuments } from 'yaml';
import type { RunIo } from '@duplex-bench/cli';
import { parseRunOptions } from '../run/run-options';
import { k8sCommand } from './k8s-command';

async function generate(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: RunIo = { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, signals: new EventEmitter(), exitNow: () => undefined, argv };
  return { code: await k8sCommand(argv, io), stdout, stderr };
}

const ARGS = ['--shards', '4', '--image', 'registry.example/duplex-bench:1', '--url', 'ws://omni.serving:8765/v1/realtime', '--run-args', '--concurrency 4096 --duration 60 --protocol openai', '--api-key-secret', 'omni-key'];

describe('k8s manifests', () => {
  it('writes an Indexed Job of the shards and a merge Job, both valid against the Kubernetes schemas', async () => {
    const before = Date.now();
    const { code, stdout, stderr } = await generate([...ARGS, '--start-in-s', '90']);
    expect(code).toBe(0);
    const docs = parseAllDocuments(stdout).map((d) => d.toJS() as Record<string, unknown>);
    expect(docs).toHaveLength(2);
    // The schemas of batch/v1 Job (kubernetes-models): a wrong field or type throws.
    for (const doc of docs) expect(() => new Job(doc as ConstructorParameters<typeof Job>[0]).validate()).not.toThrow();
    const [shards, merge] = docs as Array<{ metadata: { name: string }; spec: Record<string, unknown> & { template: { spec: { containers: Array<{ command: string[]; env?: unknown[]; resources: unknown }> } } } }>;
    expect(shards.spec).toMatchObject({ completionMode: 'Indexed', completions: 4, parallelism: 4, backoffLimit: 0 });
    const script = shards.spec.template.spec.containers[0].command[2];
    expect(script).toContain('--shard "$JOB_COMPLETION_INDEX/4"');
    expect(script).toContain('--concurrency 4096 --duration 60 --protocol openai');
    const start = Number(/--start-at (\d+)/.exec(script)?.[1]);
    expect(start).toBeGreaterThanOrEqual(before + 90_000);
    expect(start).toBeLessThan(Date.now() + 90_000 + 1);
    expect(stderr).toContain(new Date(start).toISOString());
    // The key comes from the Secret, never on the command line.
    expect(shards.spec.template.spec.containers[0].env).toEqual([{ name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'omni-key', key: 'api-key' } } }]);
    expect(shards.spec.template.spec.containers[0].resources).toEqual({ requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } });
    expect(merge.spec.template.spec.containers[0].command[2]).toBe(
      'exec node /app/bin/duplex-bench.js merge /data/duplex-bench/shard-0 /data/duplex-bench/shard-1 /data/duplex-bench/shard-2 /data/duplex-bench/shard-3 --output /data/duplex-bench/merged',
    );
  });

  it("gives each shard a command line that run itself accepts: shard 3's share, its ids and output", async () => {
    const { stdout } = await generate(ARGS);
    const script = (parseAllDocuments(stdout)[0].toJS() as { spec: { template: { spec: { containers: Array<{ command: string[] }> } } } }).spec.template.spec.containers[0].command[2];
    const argv = script.replace(/^exec node \/app\/bin\/duplex-bench.js run /, '').replace('"$JOB_COMPLETION_INDEX/4"', '3/4').split(' ');
    const opts = parseRunOptions(argv);
    expect(opts).toMatchObject({ concurrency: 1024, first_session: 3072, sessions_total: 4096, output: '/data/duplex-bench/shard-3', protocol: 'openai' });
  });

  it('with --output, writes shards.yaml and merge.yaml apart (the merge is applied after the shards)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'k8s-'));
    const { code, stdout } = await generate([...ARGS, '--output', dir]);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    const kinds = await Promise.all(['shards.yaml', 'merge.yaml'].map(async (f) => (parseAllDocuments(await readFile(join(dir, f), 'utf8')).map((d) => (d.toJS() as { metadata: { name: string } }).metadata.name))));
    expect(kinds).toEqual([['duplex-bench-shards'], ['duplex-bench-merge']]);
  });

  it('refuses run flags it sets itself, and a name that is not a DNS label', async () => {
    await expect(generate([...ARGS.slice(0, 6), '--run-args', '--concurrency 8 --duration 5 --shard 0/2'])).rejects.toThrow('--run-args must not set --shard: k8s sets it for each shard');
    await expect(generate([...ARGS, '--name', 'Bad_Name'])).rejects.toThrow('--name must be a DNS label');
  });
});

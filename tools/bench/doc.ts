import * as fs from 'node:fs';
import * as path from 'node:path';

function docMarkers(name: string): { start: string; end: string } {
  return { start: `<!-- bench:${name}:start -->`, end: `<!-- bench:${name}:end -->` };
}

/** A section of a results document: its markers, title, host, command and date, then the tables. */
export function docSection(name: string, title: string, host_line: string, command: string, date: string, tables: string): string {
  const { start, end } = docMarkers(name);
  return [start, title, '', `Host: ${host_line}`, '', `Command: \`${command}\``, '', `Date: ${date}`, '', tables, end].join('\n');
}

/** Replaces the section between `<!-- bench:NAME:start/end -->` in a markdown text, or appends it. */
export function withSection(text: string, name: string, section: string): string {
  const { start: start_marker, end: end_marker } = docMarkers(name);
  const start = text.indexOf(start_marker);
  const end = start >= 0 ? text.indexOf(end_marker, start) : -1;
  if (start >= 0 && end < 0) throw new Error(`${start_marker} has no ${end_marker} after it; not writing`);
  return start >= 0 ? text.slice(0, start) + section + text.slice(end + end_marker.length) : `${text.trimEnd()}\n\n${section}\n`;
}

/** Writes `section` into `file` (created as a Performance page when missing). */
export function writeDoc(file: string, name: string, section: string): void {
  const existing = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Performance\n';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, withSection(existing, name, section));
}

/** A command line as a shell would take it back. */
export function commandLine(argv: string[]): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return argv.map(quote).join(' ');
}
